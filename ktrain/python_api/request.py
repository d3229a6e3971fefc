"""What a Python API call asks for, as the use cases take it: a `RenderRequest` and the runtime
registry (`prepare`), the job named per call (`unique_name`), and a function as the job's code
(`function_source`, `function_request`: the call the Kubeflow SDK makes, `func(**func_args)`)."""

from __future__ import annotations

import ast
import inspect
import os
import random
import string
import textwrap
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from ktrain.errors import ArgumentTypeError, UsageError
from ktrain.inputs.code_bundle import CodeBundle, CodeFile
from ktrain.inputs.feature_gates import ENV_FEATURE_GATES, ENV_STATUS_SERVER, merged_gates
from ktrain.inputs.registry import RuntimeRegistry
from ktrain.python_api import arguments as a
from ktrain.service.requests import RenderRequest

FUNC_FILE = "ktrain_train.py"
NAME_SUFFIX_LENGTH = 11  # SDK constants.JOB_NAME_UUID_LENGTH
MAX_JOB_DEPTH = 64  # a job dict nested deeper than any TrainJob is refused, not walked


def unique_name() -> str:
    """A new job name per call, as the SDK's `train` makes one: a letter, then 11 hex digits."""
    return random.choice(string.ascii_lowercase) + uuid.uuid4().hex[:NAME_SUFFIX_LENGTH]


def _plain(value: object, arg: str, depth: int = 0) -> None:
    """JSON-like data only (what a TrainJob is made of)."""
    if depth > MAX_JOB_DEPTH:
        raise UsageError(f"{arg}: nested deeper than {MAX_JOB_DEPTH} levels")
    if value is None or isinstance(value, (str, bool, int)):
        return
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise UsageError(f"{arg}: {a.shown(value)} is not a value a TrainJob can hold")
        return
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str):
                raise a.wrong_type(f"a key of {arg}", "a string", key)
            _plain(item, f"{arg}[{a.shown(key)}]", depth + 1)
        return
    if isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            _plain(item, f"{arg}[{i}]", depth + 1)
        return
    raise a.wrong_type(arg, "plain data (dicts, lists, strings, numbers, booleans, None)", value)


def _job_source(job: object) -> tuple[str | None, str | None]:
    """(file label, text) for the service: a path is read by the service, text and dicts are not.
    A str with a line break, or starting with `{`, is YAML text; any other str is a path."""
    if job is None:
        return None, None
    if isinstance(job, Mapping):
        from ktrain.output.yamltext import dump

        _plain(job, "job")
        return "<job>", dump(dict(job))
    if isinstance(job, os.PathLike):
        return a.path(job, "job"), None
    if isinstance(job, str):
        if "\n" in job or job.lstrip().startswith("{"):
            return "<job>", job
        return a.path(job, "job"), None
    raise a.wrong_type("job", "a dict, YAML text or a path", job)


# Keywords of every job function that are not job options: where runtimes come from, and the
# render's switches (`--runtime-file`, `--runtimes-dir`, `--allow-extensions`, `--ssh-secret`).
REQUEST_KEYWORDS = ("runtime_files", "runtimes_dirs", "allow_extensions", "ssh_secret")


def prepare(
    job: object, options: Mapping[str, Any], *, function: str, refused: Mapping[str, str] | None = None
) -> tuple[Any, Any]:
    """(RenderRequest, runtime registry) for a job (dict, YAML text or path) and keyword arguments
    (job options and REQUEST_KEYWORDS), every one checked here."""
    rest = dict(options)
    files = a.path_list(rest.pop("runtime_files", None), "runtime_files")
    dirs = a.path_list(rest.pop("runtimes_dirs", None), "runtimes_dirs")
    allow_extensions = a.boolean(rest.pop("allow_extensions", False), "allow_extensions")
    ssh_secret = a.optional_text(rest.pop("ssh_secret", None), "ssh_secret")
    file, text = _job_source(job)
    request = RenderRequest(
        file=file,
        text=text,
        overrides=a.job_overrides(rest, function=function, refused=refused, also=REQUEST_KEYWORDS),
        allow_extensions=allow_extensions,
        ssh_secret=ssh_secret,
    )
    _feature_gates_from_environment(request)
    # As the CLI's registry (ktrain.cli.common.registry_from): files, directories, $KTRAIN_RUNTIMES_PATH, bundled.
    registry = RuntimeRegistry(files=files, dirs=dirs, env_path=os.environ.get("KTRAIN_RUNTIMES_PATH"))
    return request, registry


def _literal(value: dict[str, Any], arg: str) -> str:
    """`value` as a Python literal the pod reads back equal (the SDK writes `repr(func_args)`
    into the script): strings, numbers, booleans, None and lists, tuples, dicts, sets of them."""
    why = "only Python literals travel to the pod (str, int, float, bool, None; lists, tuples, dicts, sets of them)"
    text = ""
    try:
        text = repr(value)
        same = _literal_types(value) and ast.literal_eval(text) == value
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        same = False
    if not same:  # an object, nan or inf, a subclass with its own repr, an int too long to print
        raise UsageError(f"{arg}: {why}")
    return text


LITERAL_TYPES = (str, int, float, bool, type(None), bytes, list, tuple, dict, set)


def _literal_types(value: object, depth: int = 0) -> bool:
    """Every value is of a literal's own type (a subclass could print itself as anything)."""
    if depth > MAX_JOB_DEPTH or type(value) not in LITERAL_TYPES:
        return False
    if isinstance(value, dict):
        return all(_literal_types(k, depth + 1) and _literal_types(v, depth + 1) for k, v in value.items())
    if isinstance(value, (list, tuple, set)):
        return all(_literal_types(item, depth + 1) for item in value)
    return True


def function_source(func: Callable[..., Any], func_args: Mapping[str, Any] | None) -> str:
    """The script that runs `func` in the pod, as the SDK's `get_command_using_train_func` writes
    it: the function's source, then `func()` or `func(**func_args)`."""
    if not callable(func):
        raise a.wrong_type("func", "a function", func)
    if not inspect.isfunction(func):
        raise ArgumentTypeError(
            f"func must be a function defined with `def`, not {a.type_name(func)}",
            hint="the function's source is what runs in the pod: methods, classes and builtins have no call to make",
        )
    name = func.__name__
    if not name.isidentifier():
        raise UsageError("func must be a function defined with `def` (a lambda has no name to call)")
    try:
        source = textwrap.dedent(inspect.getsource(func))
    except (OSError, TypeError) as exc:
        raise UsageError(f"cannot read the source of {a.shown(name)}: {exc}") from None
    if func_args is None:
        return f"{source}\n{name}()\n"
    args = a.mapping(func_args, "func_args")
    for key in args:
        a.text(key, "a key of func_args")
    try:
        inspect.signature(func).bind(**args)
    except TypeError as exc:  # what the call in the pod would raise, said now
        raise UsageError(f"func_args do not fit {name}{inspect.signature(func)}: {exc}") from None
    return f"{source}\n{name}(**{_literal(dict(args), 'func_args')})\n"


def function_request(
    func: Callable[..., Any],
    func_args: object,
    *,
    function: str,
    options: Mapping[str, Any],
    job: object = None,
) -> tuple[Any, Any]:
    """(RenderRequest, registry) that run `func(**func_args)` on the runtime's launcher: its
    source goes as the job's code (one file), the trainer command is built once the runtime is
    resolved (ktrain.service.code.launcher_command)."""
    refused = {
        "command": "the command runs the function (pass command= to render / Client().create)",
        "code": "the function is the code (pass code= to render / Client().create)",
    }
    request, registry = prepare(job, options, function=function, refused=refused)
    script = function_source(func, func_args if func_args is None else a.mapping(func_args, "func_args")).encode()
    request.code_bundle = CodeBundle(files=[CodeFile(path=FUNC_FILE, data=script, executable=False)])
    request.entry_file = FUNC_FILE
    return request, registry


def _feature_gates_from_environment(request: Any) -> None:
    """The controller's feature gates as the CLI's default reads them ($KTRAIN_FEATURE_GATES)."""
    request.feature_gates = merged_gates(os.environ.get(ENV_FEATURE_GATES), None)
    request.status_server = os.environ.get(ENV_STATUS_SERVER) or None
