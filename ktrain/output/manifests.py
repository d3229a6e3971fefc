"""Rendered objects on stdout: -o yaml | json | name (kubectl conventions)."""

from __future__ import annotations

from ktrain.errors import UsageError

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    from ktrain.util.jsondata import Obj


def resource_name(obj: Obj) -> str:
    """kubectl's `-o name` form: `<resource>.<group>/<name>` (core group: `<resource>/<name>`)."""
    kind = str(obj.get("kind", "")).lower()
    api_version = str(obj.get("apiVersion", ""))
    group = api_version.split("/")[0] if "/" in api_version else ""
    name = (obj.get("metadata") or {}).get("name", "")
    return f"{kind}.{group}/{name}" if group else f"{kind}/{name}"


OUTPUT_FORMATS = ("yaml", "json", "name")


def check_output(output: str, formats: tuple[str, ...] = OUTPUT_FORMATS) -> None:
    """Refuse an unknown -o value before any work is done (a render, a cluster call)."""
    if output not in formats:
        raise UsageError(f"unknown output format {output!r}: use {', '.join(formats[:-1])} or {formats[-1]}")


def format_objects(objects: list[Obj], output: str) -> str:
    if output == "yaml":
        from ktrain.output.yamltext import dump_all

        return dump_all(objects)
    if output == "json":
        import json

        if len(objects) == 1:
            return json.dumps(objects[0], indent=4) + "\n"
        return json.dumps({"apiVersion": "v1", "kind": "List", "items": objects, "metadata": {}}, indent=4) + "\n"
    if output == "name":
        return "".join(resource_name(o) + "\n" for o in objects)
    check_output(output)
    raise AssertionError(output)  # check_output refused it
