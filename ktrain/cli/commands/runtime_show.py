"""`ktrain runtime show`: one blueprint, and what the engine injects when a job runs on it."""

from __future__ import annotations

import sys

from ktrain.cli.commands.runtime_list import LIST_TIMEOUT, RUNTIME_FILE, RUNTIMES_DIR, SOURCE, registry_for, summary
from ktrain.cli.spec import CONTEXT, KUBECONFIG, NAMESPACE, Argument, Option, command

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    from typing import Annotated, Any


@command("runtime", "show", fast=True)
def show_runtime(
    name: Annotated[str, Argument(help="Runtime name.")],
    runtime_file: Annotated[list[str] | None, RUNTIME_FILE] = None,
    runtimes_dir: Annotated[list[str] | None, RUNTIMES_DIR] = None,
    output: Annotated[str, Option("-o", "--output", help="text | yaml | json")] = "text",
    source: Annotated[str, SOURCE] = "all",
    namespace: Annotated[str | None, NAMESPACE] = None,
    kubeconfig: Annotated[str | None, KUBECONFIG] = None,
    context: Annotated[str | None, CONTEXT] = None,
    request_timeout: Annotated[float, LIST_TIMEOUT] = 10.0,
) -> None:
    """Show a blueprint, and what the engine injects when a job runs on it."""
    from ktrain.output.manifests import check_output, format_objects
    from ktrain.output.yamltext import dump

    check_output(output, ("text", "yaml", "json"))  # before any work
    registry = registry_for(source, runtime_file, runtimes_dir, kubeconfig, context, namespace, request_timeout)
    entry = registry.get(name)
    if output in ("yaml", "json"):
        sys.stdout.write(format_objects([entry.runtime.to_dict()], output))
        return
    s = summary(entry)
    out = [f"# {s['kind']} {s['name']} — framework {s['framework']}, ML policy {s['mlPolicy']}, source {s['source']}"]
    out.append(dump(entry.runtime.to_dict()).rstrip("\n"))
    out.append("")
    out.append("# What rendering a TrainJob on this runtime adds (1 node, no overrides):")
    out.extend("# " + line for line in injected(entry))
    sys.stdout.write("\n".join(out) + "\n")


def injected(entry: Any) -> list[str]:
    from ktrain import constants as c
    from ktrain.api.records import validate
    from ktrain.engine import RenderContext, SshKeyPair, render
    from ktrain.errors import KtrainError

    runtime = entry.runtime
    job = validate(
        "TrainJob",
        {
            "metadata": {"name": "example", "namespace": "default"},
            "spec": {"runtimeRef": {"name": runtime.name, "kind": runtime.kind}, "trainer": {}},
        },
    )
    ctx = RenderContext(ssh_key=SshKeyPair(b"<private key>", b"<public key>\n"))
    try:
        result = render(job, runtime, ctx)
    except KtrainError as exc:
        return [f"(cannot render a default job: {exc})"]
    lines = []
    original = {r.get("name"): r for r in runtime.spec.template.spec.get("replicatedJobs") or []}
    for obj in result.objects:
        lines.append(f"object: {obj['kind']} ({obj['apiVersion']}) {obj['metadata']['name']}")
        if obj["kind"] != c.JOBSET_KIND:
            continue
        for rjob in obj["spec"].get("replicatedJobs") or []:
            pod = rjob["template"]["spec"]["template"].get("spec") or {}
            before = original.get(rjob["name"]) or {}
            before_pod = (((before.get("template") or {}).get("spec") or {}).get("template") or {}).get("spec") or {}
            before_env = {
                (ct.get("name"), e.get("name"))
                for ct in (before_pod.get("containers") or []) + (before_pod.get("initContainers") or [])
                for e in ct.get("env") or []
            }
            for ct in (pod.get("initContainers") or []) + (pod.get("containers") or []):
                for e in ct.get("env") or []:
                    if (ct.get("name"), e.get("name")) in before_env:
                        continue
                    value = e.get("value", "<from " + ", ".join((e.get("valueFrom") or {}).keys()) + ">")
                    lines.append(f"  {rjob['name']}/{ct['name']} env {e['name']}={value}")
                for p in ct.get("ports") or []:
                    lines.append(f"  {rjob['name']}/{ct['name']} port {p.get('containerPort')}")
            for v in pod.get("volumes") or []:
                if not any(v.get("name") == bv.get("name") for bv in before_pod.get("volumes") or []):
                    lines.append(f"  {rjob['name']} volume {v.get('name')}")
    return lines
