"""`ktrain job render` / `ktrain render` without importing typer (issue #6: render speed).

Importing typer and letting it parse costs more than the render itself. The console script
(`ktrain.launcher`) first offers argv to `try_render`, which parses it with click's rules
(vendored in typer: `typer/_click/parser.py`) from the option table of the generated command
tree (`ktrain/completion/tree.json`, rebuilt from the typer app and checked for staleness), then
calls the same `render_job` inside the same `run_guarded` as the typer command.

It handles the command completely or declines (returns None) and the typer app runs as usual:
it declines on anything it does not fully understand — help, `--debug`, an unknown option, a
missing value, an int that is not plain digits, a value outside an option's choices — so every
message about the command line itself stays typer's. KTRAIN_NO_FASTPATH=1 turns it off.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs this path a few ms to import
    from typing import Any

# argv prefix -> path of the command in the tree
COMMANDS = {("job", "render"): ("job", "render"), ("render",): ("render",)}
SUPPORTED_TYPES = ("str", "int", "bool")
_MAX_INT_DIGITS = 18  # beyond this, leave the conversion (and any error) to typer


class Declined(Exception):
    """The fast parser is not sure it reads argv as typer would."""


def disabled() -> bool:
    return os.environ.get("KTRAIN_NO_FASTPATH", "") not in ("", "0")


def command_path(argv: list[str]) -> tuple[tuple[str, ...], list[str]] | None:
    """(tree path, the command's own arguments) when argv names a command the fast path knows."""
    for prefix, path in COMMANDS.items():
        if tuple(argv[: len(prefix)]) == prefix:
            return path, argv[len(prefix):]
    return None


def command_node(path: tuple[str, ...]) -> dict[str, Any]:
    from ktrain.completion.tree import load_tree

    node = load_tree()["root"]
    for name in path:
        node = node["commands"][name]
    return node  # type: ignore[no-any-return]


class Parser:
    """Click's option parser, for the subset of parameter kinds a command tree node describes.

    Supported: options with one value (str or int; `multiple` ones collect a list in order,
    others keep the last), boolean flags (with `--no-x` secondary names), and one `nargs=-1`
    argument. Interspersed arguments and `--` behave as in click.
    """

    def __init__(self, node: dict[str, Any]) -> None:
        self.defaults: dict[str, Any] = {}
        self.long: dict[str, dict[str, Any] | None] = {}
        self.short: dict[str, dict[str, Any] | None] = {}
        for option in node.get("options", []):
            if "dest" not in option:  # -h/--help: typer prints the help
                entry = None
            else:
                self._check_supported(option)
                self.defaults[option["dest"]] = option["default"]
                entry = option
            for name in option["names"]:
                if not name.startswith("-"):
                    raise Declined(f"option prefix of {name}")
                # click: `-x` is a short option, anything longer (`--xy`, `-xy`) a long one
                (self.short if len(name) == 2 and name[1] != "-" else self.long)[name] = entry
        arguments = node.get("arguments", [])
        if len(arguments) > 1 or any(a["nargs"] != -1 for a in arguments):
            raise Declined("positional arguments other than one nargs=-1")
        self.argument = arguments[0] if arguments else None
        if self.argument is not None:
            self._check_supported(self.argument)
            self.defaults[self.argument["dest"]] = self.argument["default"]

    @staticmethod
    def _check_supported(param: dict[str, Any]) -> None:
        if param.get("type") not in SUPPORTED_TYPES or "default" not in param:
            raise Declined(f"parameter type {param.get('type')}")
        if param.get("required") or param.get("envvar") or param.get("callback"):
            raise Declined(f"{param['dest']}: required, envvar or callback")
        if param.get("multiple") and not param.get("takes_value", True):
            raise Declined(f"{param['dest']}: a repeatable flag")

    def parse(self, args: list[str]) -> dict[str, Any]:
        """Parameter values by destination, as typer would pass them to the command."""
        values = dict(self.defaults)
        given: set[str] = set()
        positional: list[str] = []
        rest = list(args)
        while rest:
            arg = rest.pop(0)
            if arg == "--":
                break
            if arg[:1] == "-" and len(arg) > 1:
                self._option(arg, rest, values, given)
            else:
                positional.append(arg)  # click allows arguments between options
        positional += rest
        if self.argument is None:
            if positional:
                raise Declined("unexpected extra argument")
        else:
            values[self.argument["dest"]] = positional or None
        return values

    def _option(self, arg: str, rest: list[str], values: dict[str, Any], given: set[str]) -> None:
        name, sep, explicit = arg.partition("=")
        if name in self.long:
            option = self._known(self.long[name])
            if option["takes_value"]:
                self._store(option, explicit if sep else self._next(rest), values, given)
            elif sep:
                raise Declined(f"{name} does not take a value")
            else:
                self._flag(option, name, values)
        elif arg[:2] == "--":
            raise Declined(f"no such option {name}")
        else:  # a run of short options: `-n ns`, `-nns`; a value takes the rest of the word
            for index in range(1, len(arg)):
                short = "-" + arg[index]
                if short not in self.short:
                    raise Declined(f"no such option {short}")
                option = self._known(self.short[short])
                if option["takes_value"]:
                    value = arg[index + 1:] if index + 1 < len(arg) else self._next(rest)
                    self._store(option, value, values, given)
                    return
                self._flag(option, short, values)

    @staticmethod
    def _known(option: dict[str, Any] | None) -> dict[str, Any]:
        if option is None:
            raise Declined("help")
        return option

    @staticmethod
    def _next(rest: list[str]) -> str:
        if not rest:
            raise Declined("option without its value")
        return rest.pop(0)  # even `--` or `-x`: click takes the next word as the value

    @staticmethod
    def _store(option: dict[str, Any], raw: str, values: dict[str, Any], given: set[str]) -> None:
        value: Any = raw
        if option["type"] == "int":
            # typer's int conversion is lax (" 4", "+4", "4_0"); plain digits read the same everywhere
            if not (raw.isascii() and raw.isdigit() and len(raw) <= _MAX_INT_DIGITS):
                raise Declined(f"{option['dest']}: {raw!r} is not plain digits")
            value = int(raw)
        elif option["type"] != "str":
            raise Declined(f"{option['dest']}: a {option['type']} value")
        if "choices" in option and value not in option["choices"]:
            raise Declined(f"{option['dest']}: {raw!r} is not one of its choices")
        dest = option["dest"]
        if option.get("multiple"):
            if dest not in given:
                values[dest] = []
            values[dest].append(value)
        else:
            values[dest] = value
        given.add(dest)

    @staticmethod
    def _flag(option: dict[str, Any], name: str, values: dict[str, Any]) -> None:
        if option["type"] != "bool":
            raise Declined(f"{option['dest']}: a non-boolean flag")
        values[option["dest"]] = name not in option.get("false_names", ())


def parse_render(argv: list[str]) -> tuple[Any, dict[str, Any]] | None:
    """(JobInput, render_job's other keyword arguments) for a render argv, or None: declined."""
    found = command_path(argv)
    if found is None or "--debug" in argv:  # --debug: typer's wrapper shows tracebacks
        return None
    path, args = found
    try:
        for arg in argv:
            arg.encode("utf-8")  # undecodable bytes in argv: leave them to typer
        values = Parser(command_node(path)).parse(args)
    except (Declined, UnicodeEncodeError):
        return None
    from ktrain.cli.jobinput import JobInput
    from ktrain.cli.render import render_job
    from ktrain.structs import fields

    job_fields = {f.name for f in fields(JobInput)}
    code = render_job.__code__
    own = set(code.co_varnames[1:code.co_argcount])  # render_job(job_input, output, explain)
    if set(values) != job_fields | own:
        return None  # the tree and the code disagree: let typer (and the sync test) speak
    job_input = JobInput(**{name: values[name] for name in job_fields})
    return job_input, {name: values[name] for name in own}


def try_render(argv: list[str]) -> int | None:
    """The exit code of a render handled here, or None when the typer app must run."""
    if disabled():
        return None
    parsed = parse_render(argv)
    if parsed is None:
        return None
    job_input, options = parsed
    from ktrain.cli.guard import run_guarded
    from ktrain.cli.render import render_job

    def render() -> int:
        render_job(job_input, **options)
        return 0

    return run_guarded(render, debug=False)
