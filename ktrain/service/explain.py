"""`job render --explain`: where each rendered field came from."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ktrain.authoring.code_launch import is_wrapped, wrapper_words
from ktrain.authoring.explain import explain
from ktrain.inputs.documents import Path
from ktrain.service.requests import RenderOutcome, RenderRequest

if TYPE_CHECKING:
    from typing import Any

    from ktrain.util.jsondata import Obj


def explain_notes(request: RenderRequest, outcome: RenderOutcome) -> list[Any]:
    """For each rendered object, path -> where the field came from (`job render --explain`)."""
    original = outcome.document.original if outcome.document is not None else None
    file_spec = (original.get("spec") or {}) if isinstance(original, dict) else None
    file_meta = (original.get("metadata") or {}) if isinstance(original, dict) else {}

    def source(field: str, flag_value: str | None, otherwise: str) -> str:
        if flag_value:
            return f"flag --{field}"
        return "TrainJob metadata" if file_meta.get(field) else otherwise

    name_source = source("name", request.overrides.name, "derived from the job's content")
    namespace_source = source("namespace", request.overrides.namespace, "default namespace")
    assert outcome.ctx is not None
    notes = explain(
        outcome.result.objects,
        outcome.job,
        outcome.runtime.runtime,
        outcome.ctx,
        file_spec if isinstance(file_spec, dict) else None,
        name_source,
        namespace_source,
        request.source_labels,
    )
    return [_name_the_code_wrapper(obj, note) for obj, note in zip(outcome.result.objects, notes, strict=True)]


def _name_the_code_wrapper(obj: Obj, note: Any) -> Any:
    """`--explain`: the words `--code`/`--pip` put before a trainer command are the wrapper's."""

    def source(path: Path) -> str | None:
        found = note(path)
        at = path.index("command") if "command" in path else -1
        if at < 2 or path[at - 2] != "containers" or len(path) != at + 2:
            return found  # type: ignore[no-any-return]
        node: Any = obj
        for key in path[: at + 1]:
            if isinstance(node, dict):
                node = node.get(key)
            elif isinstance(node, list) and isinstance(key, int) and key < len(node):
                node = node[key]
            else:
                node = None
        if not is_wrapped(node if isinstance(node, list) else None):
            return found  # type: ignore[no-any-return]
        word = path[at + 1]
        if isinstance(word, int) and word < wrapper_words(node):
            everywhere = ", also on every MPI host through mpirun" if node[7] not in ("", "0") else ""
            return f"--code/--pip wrapper (ktrain: copy the code, pip install{everywhere}, exec the command)"
        return f"{found}, run by the --code/--pip wrapper"

    return source
