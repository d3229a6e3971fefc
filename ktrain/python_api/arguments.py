"""The Python API's arguments, checked where they enter.

Every public function checks what it is given before any work starts, and raises
`ktrain.errors.ArgumentTypeError` (a `UsageError` and a `TypeError`) for a value of the wrong type
and `ktrain.errors.UsageError` (also a `ValueError`) for a wrong value, the message naming the
argument (`resources_per_node['gpu']`, `trainer.func_args`). Nothing deeper sees a value of a type
it does not expect.

The job options (`ktrain.render(..., kueue_queue="q")`) are derived from
`ktrain.service.requests.JobOverrides`, the command line's job options: each field is a keyword of
the same name and meaning, checked by its annotation (`str | None`, `int | None`, `bool | None`,
`list[str]`, `dict[str, str]`), except where the Python value differs from the flag's (`CONVERTERS`)
or the Kubeflow SDK has another name for it (`RENAMED`). A new plain field is thus a new keyword
with no change here; a field of another type needs one line in `CONVERTERS` (a test fails until
it has one).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping
from datetime import timedelta
from enum import Enum
from typing import Any

from ktrain.authoring import failure_policy as fp
from ktrain.authoring import finetune
from ktrain.authoring.elastic import parse_elastic
from ktrain.authoring.failure_policy import parse_checkpoint, parse_duration_seconds, parse_restart_strategy
from ktrain.authoring.placement import parse_node_selector, parse_toleration
from ktrain.errors import ArgumentTypeError, KtrainError, UsageError
from ktrain.util.jsondata import Obj

INT32_MAX = 2**31 - 1

# JobOverrides field -> the Kubeflow SDK's name for it, which the Python API uses.
RENAMED = {
    "nodes": "num_nodes",
    "nproc_per_node": "num_proc_per_node",
    "pip": "packages_to_install",
    "ttl_seconds": "ttl",
}
# The smallest value an integer option takes (0 otherwise).
MINIMUM = {"nodes": 1, "nproc_per_node": 1}


def type_name(value: object) -> str:
    return type(value).__name__


def shown(value: object, limit: int = 80) -> str:
    """A value in an error message: its repr, cut to `limit` characters; an integer too long to
    print, or an object whose repr fails, by what it is (a message never raises)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        return f"an integer of {value.bit_length()} bits"
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - any repr may fail; the message must not
        return f"a {type_name(value)}"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def wrong_type(arg: str, expected: str, value: object) -> ArgumentTypeError:
    return ArgumentTypeError(f"{arg} must be {expected}, not {type_name(value)}")


def text(value: object, arg: str) -> str:
    if not isinstance(value, str):
        raise wrong_type(arg, "a string", value)
    return value


def optional_text(value: object, arg: str) -> str | None:
    return None if value is None else text(value, arg)


def integer(value: object, arg: str, *, minimum: int = 0, maximum: int = INT32_MAX) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise wrong_type(arg, "an integer", value)
    if not minimum <= value <= maximum:
        raise UsageError(f"{arg} must be between {minimum} and {maximum}, not {shown(value)}")
    return int(value)


def optional_integer(value: object, arg: str, *, minimum: int = 0, maximum: int = INT32_MAX) -> int | None:
    return None if value is None else integer(value, arg, minimum=minimum, maximum=maximum)


def boolean(value: object, arg: str) -> bool:
    if not isinstance(value, bool):
        raise wrong_type(arg, "True or False", value)
    return value


def optional_boolean(value: object, arg: str) -> bool | None:
    return None if value is None else boolean(value, arg)


def number(value: object, arg: str, *, minimum: float = 0.0, positive: bool = False) -> float:
    """A finite int or float (seconds, a timeout)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise wrong_type(arg, "a number", value)
    try:
        as_float = float(value)
    except OverflowError:
        as_float = math.inf
    if not math.isfinite(as_float) or as_float < minimum or (positive and as_float <= 0):
        raise UsageError(f"{arg} must be a finite number {'>' if positive else '>='} {minimum:g}, not {shown(value)}")
    return as_float


def items_of(value: object, arg: str, what: str) -> list[Any]:
    """A list or tuple (a bare string is refused: `["numpy"]`, not `"numpy"`)."""
    if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)):
        hint = f"a list: [{shown(value)}]" if isinstance(value, str) else None
        raise ArgumentTypeError(f"{arg} must be a list of {what}, not {type_name(value)}", hint=hint)
    return list(value)


def text_list(value: object, arg: str) -> list[str]:
    return [text(item, f"{arg}[{i}]") for i, item in enumerate(items_of(value, arg, "strings"))]


def optional_text_list(value: object, arg: str) -> list[str] | None:
    return None if value is None else text_list(value, arg)


def text_list_or_empty(value: object, arg: str) -> list[str]:
    return [] if value is None else text_list(value, arg)


def path(value: object, arg: str) -> str:
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if not isinstance(value, str):
        raise wrong_type(arg, "a path (str or os.PathLike)", value)
    if "\0" in value:
        raise UsageError(f"{arg}: a path cannot hold a NUL character")
    return value


def path_list(value: object, arg: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, os.PathLike):
        raise ArgumentTypeError(f"{arg} must be a list of paths, not {type_name(value)}", hint=f"[{shown(value)}]")
    return [path(item, f"{arg}[{i}]") for i, item in enumerate(items_of(value, arg, "paths"))]


def mapping(value: object, arg: str) -> Mapping[Any, Any]:
    if not isinstance(value, Mapping):
        raise wrong_type(arg, "a dict", value)
    return value


def text_map(value: object, arg: str) -> dict[str, str]:
    if value is None:
        return {}
    out: dict[str, str] = {}
    for key, item in mapping(value, arg).items():
        name = text(key, f"a key of {arg}")
        out[name] = text(item, f"{arg}[{shown(name)}]")
    return out


def optional_text_map(value: object, arg: str) -> dict[str, str] | None:
    return None if value is None else text_map(value, arg)


def env_pairs(value: object, arg: str) -> list[tuple[str, str]]:
    return list(text_map(value, arg).items())


def quantity(value: object, arg: str) -> str:
    """A resource amount as the SDK takes it: a string ("8Gi"), an int or a float (4, 0.5)."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise wrong_type(arg, "a quantity (a string such as '8Gi', or a number)", value)
    if isinstance(value, float) and not math.isfinite(value):
        raise UsageError(f"{arg} must be a finite number, not {shown(value)}")
    if isinstance(value, int) and abs(value) > 2**63 - 1:
        raise UsageError(f"{arg}: {shown(value)} is too large for a Kubernetes quantity")
    return str(value)


# The SDK's `get_resources_per_node`: these keys are lower-cased, `gpu` is NVIDIA's, `mig-*` a MIG slice.
RESOURCE_ALIASES = {"gpu": "nvidia.com/gpu", "storage": "ephemeral-storage"}
STANDARD_RESOURCES = {"cpu", "memory", "gpu", "storage", "ephemeral-storage"}
MIG_PREFIX = "nvidia.com/mig-"


def resources(value: object, arg: str) -> dict[str, str]:
    """`{"gpu": 1, "cpu": 4, "memory": "8Gi", "mig-1g.5gb": 1}` as the SDK reads it: standard names
    lower-cased, `gpu` → `nvidia.com/gpu`, `mig-PROFILE` → `nvidia.com/mig-PROFILE` (one MIG type,
    not with whole GPUs)."""
    out: dict[str, str] = {}
    if value is None:
        return out
    for key, amount in mapping(value, arg).items():
        name = text(key, f"a key of {arg}")
        lower = name.lower()
        canonical = lower if lower in STANDARD_RESOURCES or lower.startswith("mig-") else name
        canonical = RESOURCE_ALIASES.get(canonical, canonical)
        if canonical.startswith("mig-"):
            canonical = MIG_PREFIX + canonical[len("mig-") :]
        out[canonical] = quantity(amount, f"{arg}[{shown(name)}]")
    migs = [k for k in out if k.startswith(MIG_PREFIX)]
    if len(migs) > 1:
        raise UsageError(f"{arg}: one MIG resource type per node, not {', '.join(migs)}")
    if migs and "nvidia.com/gpu" in out:
        raise UsageError(f"{arg}: whole GPUs (nvidia.com/gpu) and MIG slices ({migs[0]}) cannot be requested together")
    return out


def _flag_error(exc: KtrainError, flag: str, arg: str) -> UsageError:
    """A parser's error about a flag, worded for the Python argument."""
    return UsageError(exc.message.replace(flag, arg), hint=exc.hint.replace(flag, arg) if exc.hint else None)


def node_selector(value: object, arg: str) -> dict[str, str]:
    pairs = text_map(value, arg)
    try:
        return parse_node_selector([f"{k}={v}" for k, v in pairs.items()])
    except UsageError as exc:
        raise _flag_error(exc, "--node-selector", arg) from None


TOLERATION_KEYS = {"key": str, "operator": str, "value": str, "effect": str, "tolerationSeconds": int}


def tolerations(value: object, arg: str) -> list[Obj]:
    """Kubernetes tolerations (dicts), or kubectl's taint syntax `KEY[=VALUE][:EFFECT]`."""
    out: list[Obj] = []
    if value is None:
        return out
    for i, item in enumerate(items_of(value, arg, "tolerations (dicts or 'KEY[=VALUE][:EFFECT]')")):
        where = f"{arg}[{i}]"
        if isinstance(item, str):
            try:
                out.append(parse_toleration(item))
            except UsageError as exc:
                raise _flag_error(exc, "--toleration", where) from None
            continue
        toleration: Obj = {}
        for key, field_value in mapping(item, where).items():
            name = text(key, f"a key of {where}")
            kind = TOLERATION_KEYS.get(name)
            if kind is None:
                raise UsageError(f"{where}: unknown field {shown(name)}", hint="fields: " + ", ".join(TOLERATION_KEYS))
            if kind is int:
                toleration[name] = integer(field_value, f"{where}[{shown(name)}]", minimum=-(2**63), maximum=2**63 - 1)
            else:
                toleration[name] = text(field_value, f"{where}[{shown(name)}]")
        out.append(toleration)
    return out


def elastic(value: object, arg: str) -> tuple[int, int] | None:
    """`(MIN, MAX)` or `"MIN:MAX"`."""
    if value is None:
        return None

    if isinstance(value, str):
        try:
            return parse_elastic(value)
        except UsageError as exc:
            raise _flag_error(exc, "--elastic", arg) from None
    pair = items_of(value, arg, "two integers (MIN, MAX)")
    if len(pair) != 2:
        raise UsageError(f"{arg} must be (MIN, MAX), not {len(pair)} items")
    low = integer(pair[0], f"{arg}[0]", minimum=1)
    high = integer(pair[1], f"{arg}[1]", minimum=1)
    if low > high:
        raise UsageError(f"{arg}: need MIN <= MAX, not ({low}, {high})")
    return low, high


def exit_codes(value: object, arg: str) -> list[int] | None:
    """`2`, `[2, 42]` or `"2,42"` (authoring/failure_policy.py)."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            return fp.parse_exit_codes(value, arg)
        except UsageError as exc:
            raise _flag_error(exc, "--fail-on-exit-code", arg) from None
    items = [value] if isinstance(value, int) and not isinstance(value, bool) else items_of(value, arg, "exit codes")
    codes = [integer(v, f"{arg}[{i}]", minimum=1, maximum=255) for i, v in enumerate(items)]
    return sorted(set(codes)) or None


def restart_strategy(value: object, arg: str) -> str | None:
    return None if value is None else parse_restart_strategy(text(value, arg), arg)


def ttl(value: object, arg: str) -> int | None:
    """Seconds (an int), a duration string (`"7d"`) or a `datetime.timedelta`."""
    if value is None:
        return None
    if isinstance(value, timedelta):
        value = int(value.total_seconds())
    if isinstance(value, str):
        return parse_duration_seconds(value, arg)
    return integer(value, arg)


def checkpoint(value: object, arg: str) -> Any:
    """`"CLAIM"`, `"CLAIM:/path"` or `(CLAIM, PATH)`."""
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        pair = items_of(value, arg, "(CLAIM, PATH)")
        if len(pair) != 2:
            raise UsageError(f"{arg} must be (CLAIM, PATH), not {len(pair)} items")
        value = f"{text(pair[0], f'{arg}[0]')}:{text(pair[1], f'{arg}[1]')}"
    return parse_checkpoint(text(value, arg), arg)


def kind_of(value: object) -> str:
    """An SDK value's class name: ktrain's types and the SDK's own are read alike (by field name)."""
    return type(value).__name__


def field_of(value: object, name: str) -> Any:
    """A field of an SDK value, None when it has no such field."""
    return getattr(value, name, None)


def enum_value(value: object, arg: str, allowed: dict[str, str]) -> str | None:
    """An SDK enum member, its value or its member name → the value; `allowed`: name -> value."""
    if value is None:
        return None
    if isinstance(value, Enum):
        value = value.value
    if not isinstance(value, str):
        raise wrong_type(arg, "one of " + ", ".join(allowed.values()), value)
    if value in allowed.values():
        return value
    if value in allowed:
        return allowed[value]
    raise UsageError(f"{arg} must be one of {', '.join(allowed.values())}, not {shown(value)}")


def fine_tuning_of(config: object, arg: str) -> Any:
    """A TorchTuneConfig as ktrain's FineTuning (the fine-tuning flags); its num_nodes and
    resources_per_node are the trainer's (`ktrain.python_api.conversion.trainer_keywords`)."""
    if kind_of(config) != "TorchTuneConfig":
        raise wrong_type(arg, "a TorchTuneConfig", config)
    dtypes = {d.upper(): d for d in finetune.DTYPES}
    peft = _peft_of(field_of(config, "peft_config"), f"{arg}.peft_config")
    tuning = finetune.FineTuning(
        dtype=enum_value(field_of(config, "dtype"), f"{arg}.dtype", dtypes),
        batch_size=optional_integer(field_of(config, "batch_size"), f"{arg}.batch_size", minimum=1),
        epochs=optional_integer(field_of(config, "epochs"), f"{arg}.epochs", minimum=1),
        loss=enum_value(field_of(config, "loss"), f"{arg}.loss", finetune.LOSSES),
        peft=peft,
    )
    dataset = field_of(config, "dataset_preprocess_config")
    if dataset is not None:
        where = f"{arg}.dataset_preprocess_config"
        if kind_of(dataset) != "TorchTuneInstructDataset":
            raise wrong_type(where, "a TorchTuneInstructDataset", dataset)
        formats = {f.upper(): f for f in finetune.DATA_FORMATS}
        tuning.instruct_dataset = True
        tuning.dataset_source = enum_value(field_of(dataset, "source"), f"{where}.source", formats)
        tuning.dataset_split = optional_text(field_of(dataset, "split"), f"{where}.split")
        tuning.train_on_input = optional_boolean(field_of(dataset, "train_on_input"), f"{where}.train_on_input")
        tuning.system_prompt = optional_text(field_of(dataset, "new_system_prompt"), f"{where}.new_system_prompt")
        tuning.column_map = optional_text_map(field_of(dataset, "column_map"), f"{where}.column_map")
    return tuning


def _peft_of(lora: object, arg: str) -> Any:
    if lora is None:
        return None
    if kind_of(lora) != "LoraConfig":
        raise wrong_type(arg, "a LoraConfig", lora)
    modules = optional_text_list(field_of(lora, "lora_attn_modules"), f"{arg}.lora_attn_modules") or []
    for module in modules:
        if module not in finetune.ATTENTION_MODULES:
            raise UsageError(
                f"{arg}.lora_attn_modules: unknown module {shown(module)}",
                hint="modules: " + ", ".join(finetune.ATTENTION_MODULES),
            )
    if not modules:
        # Without lora_attn_modules neither the SDK's args nor the controller make it a LoRA job.
        raise UsageError(f"{arg}.lora_attn_modules needs at least one attention module")
    dropout = field_of(lora, "lora_dropout")
    if dropout is not None and number(dropout, f"{arg}.lora_dropout") >= 1.0:
        raise UsageError(f"{arg}.lora_dropout must be in [0, 1), not {shown(dropout)}")
    return finetune.Peft(
        kind="lora",
        rank=optional_integer(field_of(lora, "lora_rank"), f"{arg}.lora_rank", minimum=1),
        alpha=optional_integer(field_of(lora, "lora_alpha"), f"{arg}.lora_alpha", minimum=1),
        dropout=dropout,  # as given: the SDK writes the value's own spelling (0 or 0.0)
        attention_modules=modules,
        mlp=optional_boolean(field_of(lora, "apply_lora_to_mlp"), f"{arg}.apply_lora_to_mlp"),
        output=optional_boolean(field_of(lora, "apply_lora_to_output"), f"{arg}.apply_lora_to_output"),
        quantize_base=optional_boolean(field_of(lora, "quantize_base"), f"{arg}.quantize_base"),
        use_dora=optional_boolean(field_of(lora, "use_dora"), f"{arg}.use_dora"),
    )


def fine_tuning(value: object, arg: str) -> Any:
    return None if value is None else fine_tuning_of(value, arg)


def command(value: object, arg: str) -> list[str] | None:
    return optional_text_list(value, arg)


# JobOverrides fields whose Python value is not the plain type of their annotation.
CONVERTERS: dict[str, Callable[[object, str], Any]] = {
    "env": env_pairs,
    "requests": resources,
    "limits": resources,
    "fine_tuning": fine_tuning,
    "node_selector": node_selector,
    "tolerations": tolerations,
    "elastic": elastic,
    "fail_on_exit_codes": exit_codes,
    "restart_strategy": restart_strategy,
    "ttl_seconds": ttl,
    "checkpoint": checkpoint,
    "command": command,
    "code": path_list,
    "patch_files": path_list,
    "values_files": path_list,
}


def _by_annotation(field: str, annotation: str) -> Callable[[object, str], Any]:
    plain: dict[str, Callable[[object, str], Any]] = {
        "str | None": optional_text,
        "bool | None": optional_boolean,
        "list[str]": text_list_or_empty,
        "dict[str, str]": text_map,
    }
    if annotation == "int | None":
        low = MINIMUM.get(field, 0)
        return lambda value, arg: optional_integer(value, arg, minimum=low)
    if annotation in plain:
        return plain[annotation]
    raise TypeError(
        f"JobOverrides.{field}: {annotation!r} has no Python argument check; add one to "
        "ktrain.python_api.arguments.CONVERTERS"
    )


def job_keywords() -> dict[str, tuple[str, Callable[[object, str], Any]]]:
    """Python keyword -> (JobOverrides field, its check), for every JobOverrides field."""
    from ktrain.service.requests import JobOverrides

    annotations: dict[str, str] = {}
    for klass in reversed(JobOverrides.__mro__):
        annotations.update(getattr(klass, "__annotations__", {}))
    table: dict[str, tuple[str, Callable[[object, str], Any]]] = {}
    for field, annotation in annotations.items():
        check = CONVERTERS.get(field) or _by_annotation(field, str(annotation))
        table[RENAMED.get(field, field)] = (field, check)
    return table


# Keywords that are not JobOverrides fields: the SDK's `resources_per_node` (requests and limits both).
EXTRA_KEYWORDS = ("resources_per_node",)


def job_overrides(
    keywords: Mapping[str, Any],
    *,
    function: str,
    refused: Mapping[str, str] | None = None,
    also: tuple[str, ...] = (),
) -> Any:
    """The JobOverrides for these keyword arguments of `function`; an unknown keyword is an
    ArgumentTypeError, as Python's own, with the closest known names (`also`: the function's other
    keywords, for those suggestions). `refused`: keywords this function does not take, with why."""
    from ktrain.service.requests import JobOverrides

    table = job_keywords()
    values: dict[str, Any] = {}
    for keyword, value in keywords.items():
        if refused and keyword in refused:
            raise ArgumentTypeError(f"{function}() does not take {keyword}=: {refused[keyword]}")
        if keyword in EXTRA_KEYWORDS:
            continue
        if keyword not in table:
            import difflib

            known = [*table, *EXTRA_KEYWORDS, *also]
            close = difflib.get_close_matches(keyword, known, n=3)
            raise ArgumentTypeError(
                f"{function}() got an unexpected keyword argument {shown(keyword)}",
                hint=("did you mean " + " or ".join(close) + "?") if close else "see docs/python-api.md",
            )
        field, check = table[keyword]
        values[field] = check(value, keyword)
    if "resources_per_node" in keywords:
        # The SDK puts each resource in both requests and limits; explicit requests= / limits= win.
        amounts = resources(keywords["resources_per_node"], "resources_per_node")
        values["requests"] = {**amounts, **values.get("requests", {})}
        values["limits"] = {**amounts, **values.get("limits", {})}
    return JobOverrides(**values)
