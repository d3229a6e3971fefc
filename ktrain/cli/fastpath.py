"""Frequent commands without importing typer (issue #6: start-up speed).

Importing typer and letting it parse costs more than rendering a job, listing runtimes or a
whole cluster command (`job list` against a server is about as fast as `kubectl get`). The
console script (`ktrain.launcher`) first offers argv to `try_fast`, which looks the command up
among the generated files of `ktrain/cli/fast_commands/` (written by `ktrain.cli.generate` from
the command declarations and checked for staleness): a command declared `@command(..., fast=True)`
has one there (`job.get.json`), naming its `handler` and holding its option table as the command
tree has it, without the help texts. Reading that 2 KB file rather than the 180 KB tree saves
1.8-2.7 ms of a 60 ms `job get` (issue #32). It parses the arguments with click's rules
(vendored in typer: `typer/_click/parser.py`) from that option table, then calls the same
function the typer command calls, inside the same `run_guarded`.

It handles a command completely or declines (returns None) and the typer app runs as usual:
it declines on anything it does not fully understand — `--debug`, an unknown option, a
missing value or argument, an int or float that is not plain digits, a value outside an
option's choices or typer's `min=`/`max=` bounds — so every message about the command line
itself stays typer's.

Help is answered here too, for every command and group (`print_help`): `help_request` reads argv
as click would (`-h` as the value of an option is a value; an unknown option before or after it is
typer's error) and `ktrain.cli.helptext` renders the text from the tree, the same text the typer
app prints for its help (`ktrain.cli.typer_app.HelpCommand`); help, and only help, reads the
whole tree (`ktrain/completion/tree.json`).
KTRAIN_NO_FASTPATH=1 turns it off.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

SUPPORTED_TYPES = ("str", "int", "float", "bool")
_MAX_INT_DIGITS = 18  # beyond this, leave the conversion (and any error) to typer
_MAX_FLOAT_CHARS = 15  # plain decimals this short read the same through float() and typer


class Declined(Exception):
    """The fast parser is not sure it reads argv as typer would."""


def disabled() -> bool:
    return os.environ.get("KTRAIN_NO_FASTPATH", "") not in ("", "0")


def _tree() -> dict[str, Any]:
    global _TREE
    if _TREE is None:
        from ktrain.completion.tree import load_tree

        _TREE = load_tree()
    return _TREE


_TREE: dict[str, Any] | None = None

FAST_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fast_commands")
# What Parser reads of an option or argument; the generator keeps only these in FAST_DIR's files.
PARSE_KEYS = frozenset(
    {"names", "dest", "type", "default", "takes_value", "multiple", "required", "choices", "min", "max"}
    | {"false_names", "envvar", "callback", "nargs"}
)
_PATHS: list[tuple[str, ...]] | None = None
_NODES: dict[tuple[str, ...], dict[str, Any]] = {}


def fast_file_name(path: tuple[str, ...]) -> str:
    """The name of a fast command's generated file: `job get` -> job.get.json (in FAST_DIR)."""
    return ".".join(path) + ".json"


def fast_paths() -> list[tuple[str, ...]]:
    """The commands handled here, by their path in the tree (= how argv starts): one file each."""
    global _PATHS
    if _PATHS is None:
        names = os.listdir(FAST_DIR) if os.path.isdir(FAST_DIR) else []
        _PATHS = sorted(tuple(name[: -len(".json")].split(".")) for name in names if name.endswith(".json"))
    return _PATHS


def fast_commands() -> dict[tuple[str, ...], str]:
    """The commands handled here -> "module:function" of their body (`@command(..., fast=True)`,
    recorded as `handler`), which the typer command calls too. A body whose first parameter is
    `job_input` receives the JobInput options as one JobInput (as the typer command does); every
    other parameter is an option or argument of the same name (its `dest` in the tree)."""
    return {path: command_node(path)["handler"] for path in fast_paths()}


def __getattr__(name: str) -> Any:
    if name == "COMMANDS":  # `from ktrain.cli.fastpath import COMMANDS`, read from the tree on first use
        return fast_commands()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def command_path(argv: list[str]) -> tuple[tuple[str, ...], list[str]] | None:
    """(tree path, the command's own arguments) when argv names a command the fast path knows."""
    for path in fast_paths():
        if tuple(argv[: len(path)]) == path:
            return path, argv[len(path) :]
    return None


def command_node(path: tuple[str, ...]) -> dict[str, Any]:
    """A fast command's handler and parameter tables (its generated file, read once)."""
    if path not in _NODES:
        from ktrain.util.jsondata import loads

        with open(os.path.join(FAST_DIR, fast_file_name(path)), encoding="utf-8") as fh:
            _NODES[path] = loads(fh.read())
    return _NODES[path]


class Parser:
    """Click's option parser, for the subset of parameter kinds a command tree node describes.

    Supported: options with one value (str, int or float; `multiple` ones collect a list in
    order, others keep the last; a required one must be given), boolean flags (with `--no-x`
    secondary names), and one argument: either `nargs=-1` or a required single value.
    Interspersed arguments and `--` behave as in click.
    """

    def __init__(self, node: dict[str, Any]) -> None:
        self.defaults: dict[str, Any] = {}
        self.required: list[str] = []
        self.long: dict[str, dict[str, Any] | None] = {}
        self.short: dict[str, dict[str, Any] | None] = {}
        for option in node.get("options", []):
            if "dest" not in option:  # -h/--help: typer prints the help
                entry = None
            else:
                self._check_supported(option)
                self.defaults[option["dest"]] = option["default"]
                if option.get("required"):
                    if not option["takes_value"] or option.get("multiple"):
                        raise Declined(f"{option['dest']}: a required flag or repeatable option")
                    self.required.append(option["dest"])
                entry = option
            for name in option["names"]:
                if not name.startswith("-"):
                    raise Declined(f"option prefix of {name}")
                # click: `-x` is a short option, anything longer (`--xy`, `-xy`) a long one
                (self.short if len(name) == 2 and name[1] != "-" else self.long)[name] = entry
        arguments = node.get("arguments", [])
        if len(arguments) > 1:
            raise Declined("more than one positional argument")
        self.argument = arguments[0] if arguments else None
        if self.argument is not None:
            self._check_supported(self.argument)
            if self.argument["type"] != "str":  # positional words are passed on unconverted
                raise Declined(f"{self.argument['dest']}: a {self.argument['type']} argument")
            # nargs=-1 collects every positional word; nargs=1 must be required (an optional
            # single argument would need click's defaulting rules, which are not reproduced here)
            if (self.argument["nargs"], bool(self.argument.get("required"))) not in ((-1, False), (1, True)):
                raise Declined(f"{self.argument['dest']}: nargs {self.argument['nargs']}")
            self.defaults[self.argument["dest"]] = self.argument["default"]

    @staticmethod
    def _check_supported(param: dict[str, Any]) -> None:
        if param.get("type") not in SUPPORTED_TYPES or "default" not in param:
            raise Declined(f"parameter type {param.get('type')}")
        if param.get("envvar") or param.get("callback"):
            raise Declined(f"{param['dest']}: envvar or callback")
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
        elif self.argument["nargs"] == -1:
            values[self.argument["dest"]] = positional or None
        else:  # one required value: a missing or extra word is typer's to report
            if len(positional) != 1:
                raise Declined(f"{len(positional)} words for {self.argument['dest']}")
            values[self.argument["dest"]] = positional[0]
        missing = [dest for dest in self.required if dest not in given]
        if missing:
            raise Declined(f"missing required option {missing[0]}")
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
                    value = arg[index + 1 :] if index + 1 < len(arg) else self._next(rest)
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
        elif option["type"] == "float":
            # typer converts through pydantic; rather than mirror every spelling it accepts (and
            # its messages), read only plain decimals such as 10 or 2.5, which float() reads alike
            whole, dot, fraction = raw.partition(".")
            plain = whole.isascii() and whole.isdigit() and (not dot or (fraction.isascii() and fraction.isdigit()))
            if not plain or len(raw) > _MAX_FLOAT_CHARS:
                raise Declined(f"{option['dest']}: {raw!r} is not a plain decimal")
            value = float(raw)
        elif option["type"] != "str":
            raise Declined(f"{option['dest']}: a {option['type']} value")
        if option["type"] in ("int", "float") and not _in_range(option, value):
            raise Declined(f"{option['dest']}: {raw!r} is outside its range")
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


def _in_range(option: dict[str, Any], value: float) -> bool:
    """Within typer's inclusive `min=` / `max=` bounds. Values outside are declined: typer
    reports them (or clamps them, with clamp=True), not this parser."""
    low, high = option.get("min"), option.get("max")
    return (low is None or value >= low) and (high is None or value <= high)


def handler_of(path: tuple[str, ...]) -> Callable[..., Any]:
    """The typer-free body the tree names for a command."""
    module, _, function = command_node(path)["handler"].partition(":")
    return getattr(__import__(module, fromlist=[function]), function)  # type: ignore[no-any-return]


def parse_command(argv: list[str]) -> tuple[Callable[..., Any], dict[str, Any]] | None:
    """(the command's body, its keyword arguments) for an argv the fast path handles, or None: declined."""
    from ktrain.cli.guard import debug_requested

    found = command_path(argv)
    if found is None or debug_requested(argv):  # --debug: typer's wrapper shows tracebacks
        return None
    path, args = found
    try:
        for arg in argv:
            arg.encode("utf-8")  # undecodable bytes in argv: leave them to typer
        values = Parser(command_node(path)).parse(args)
    except (Declined, UnicodeEncodeError):
        return None
    handler = handler_of(path)
    code = handler.__code__
    params = list(code.co_varnames[: code.co_argcount + code.co_kwonlyargcount])
    if params[:1] != ["job_input"]:
        if sorted(values) != sorted(params):
            return None  # the tree and the body disagree: let typer (and the sync test) speak
        return handler, {name: values[name] for name in params}
    from ktrain.cli.jobinput import JobInput
    from ktrain.util.structs import fields

    job_fields = [f.name for f in fields(JobInput)]
    params = params[1:]
    if sorted(values) != sorted(job_fields + params):
        return None
    job_input = JobInput(**{name: values[name] for name in job_fields})
    return handler, {"job_input": job_input, **{name: values[name] for name in params}}


def _may_ask_for_help(argv: list[str]) -> bool:
    """A cheap first look: `--help`, a run of short options with an `h`, or at most one word that
    is not an option (`ktrain`, `ktrain job`). Anything else is not a help request."""
    words = 0
    for arg in argv:
        if arg == "--":
            break
        if arg == "--help" or (arg[:1] == "-" and arg[1:2] not in ("-", "") and "h" in arg):
            return True
        words += arg[:1] != "-"
    return words <= 1


def _scan_options(node: dict[str, Any], args: list[str], interspersed: bool) -> tuple[bool, int] | None:
    """Read `args` as click reads a command's (or a group's) options: (help asked for, how many
    words were read), or None when click would stop with an error or run something else first
    (an unknown option, a missing value, `--version`). A group stops at its first word that is not
    an option (the subcommand); a command reads them all (its arguments), up to `--`."""
    long: dict[str, dict[str, Any]] = {}
    short: dict[str, dict[str, Any]] = {}
    for option in node.get("options", ()):
        for name in option["names"]:
            (short if len(name) == 2 and name[1] != "-" else long)[name] = option
    asked = False
    index = 0
    while index < len(args):
        arg = args[index]
        index += 1
        if arg == "--":
            break
        if arg[:1] != "-" or len(arg) == 1:
            if not interspersed:
                return asked, index - 1
            continue
        name, sep, _ = arg.partition("=")
        # (name, its option, whether the word holds its value too)
        found: list[tuple[str, dict[str, Any] | None, bool]] = []
        if name in long or arg[:2] == "--":
            found.append((name, long.get(name), bool(sep)))
        else:  # a run of short options: `-yh`; one taking a value takes the rest of the word
            for position in range(1, len(arg)):
                option = short.get("-" + arg[position])
                inline = position + 1 < len(arg)
                found.append(("-" + arg[position], option, inline))
                if option is None or option["takes_value"]:
                    break
        for name, option, inline in found:
            if option is None:
                return None  # no such option: click's error
            if name == "--version":
                return None  # eager as --help: the first of the two wins, as typer decides
            if not option["takes_value"]:
                if inline and name[:2] == "--":
                    return None  # `--help=x`: a flag given a value, click's error
                asked = asked or "dest" not in option
            elif not inline:
                if index >= len(args):
                    return None  # the option's value is missing: click's error
                index += 1  # even `--help` is the value here, as click reads it
    return asked, index


def help_request(argv: list[str]) -> tuple[tuple[str, ...], bool] | None:
    """(the command or group path whose help to print, whether because a group was given alone)
    when argv asks for help as typer would read it: `-h`/`--help` on a known command or group, or a
    group without a command (`no_args_is_help`). None: not a help request, or not certainly one."""
    node = _tree()["root"]
    path: tuple[str, ...] = ()
    args = list(argv)
    while "commands" in node:
        if not args:
            return path, True
        scanned = _scan_options(node, args, interspersed=False)
        if scanned is None:
            return None
        asked, used = scanned
        if asked:
            return path, False
        args = args[used:]
        if not args or args[0] not in node["commands"]:
            return None  # `ktrain --debug`, `--` or an unknown command: typer's error
        path += (args[0],)
        node = node["commands"][args[0]]
        args = args[1:]
    scanned = _scan_options(node, args, interspersed=True)
    return (path, False) if scanned is not None and scanned[0] else None


def print_help(argv: list[str]) -> int | None:
    """Print the help argv asks for (the exit code), or None when argv does not ask for help."""
    if not _may_ask_for_help(argv):
        return None
    found = help_request(argv)
    if found is None:
        return None
    path, alone = found
    from ktrain.cli.guard import run_guarded
    from ktrain.cli.helptext import render_help

    def show() -> int:
        sys.stdout.write(render_help(path, _tree()))
        return 2 if alone else 0  # a group alone is a usage error that shows the help (typer's exit code)

    return run_guarded(show, debug=False)


def try_fast(argv: list[str]) -> int | None:
    """The exit code of a command handled here, or None when the typer app must run."""
    if disabled():
        return None
    code = print_help(argv)
    if code is not None:
        return code
    parsed = parse_command(argv)
    if parsed is None:
        return None
    handler, kwargs = parsed
    from ktrain.cli.guard import run_guarded

    def command() -> int:
        handler(**kwargs)
        return 0

    return run_guarded(command, debug=False)
