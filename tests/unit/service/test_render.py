"""Every bundled runtime renders at 1, 3 and 64 nodes, and the objects pass the upstream
JobSet / PodGroup CRD schemas (skipped when ../shared is absent)."""

from __future__ import annotations

import functools
from typing import Any

import pytest
import yaml
from conftest import UPSTREAM

from ktrain.engine import RenderContext, SshKeyPair
from ktrain.inputs.registry import RuntimeRegistry
from ktrain.service.render import render_request
from ktrain.service.requests import JobOverrides, RenderRequest

RUNTIMES = RuntimeRegistry().names()
CRD_FILES = {
    ("jobset.x-k8s.io/v1alpha2", "JobSet"): "jobset/jobset.x-k8s.io_jobsets.yaml",
    ("scheduling.x-k8s.io/v1alpha1", "PodGroup"): "scheduler-plugins/scheduling.x-k8s.io_podgroups.yaml",
    ("scheduling.volcano.sh/v1beta1", "PodGroup"): "volcano/scheduling.volcano.sh_podgroups.yaml",
}


@functools.cache
def _schema(api_version: str, kind: str) -> dict | None:
    rel = CRD_FILES.get((api_version, kind))
    if rel is None or not (UPSTREAM / rel).is_file():
        return None
    crd = yaml.load((UPSTREAM / rel).read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    version = api_version.split("/")[1]
    for v in crd["spec"]["versions"]:
        if v["name"] == version:
            return v["schema"]["openAPIV3Schema"]  # type: ignore[no-any-return]
    return None


@functools.cache
def _validator(api_version: str, kind: str) -> Any:
    """The CRD schema's validator, built (and the schema checked) once per kind, not per object."""
    import jsonschema

    schema = _schema(api_version, kind)
    if schema is None:
        return None
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def check_crd_schemas(objects: list[dict]) -> None:
    """Each object against its upstream CRD's schema, where ../shared has one."""
    for obj in objects:
        validator = _validator(obj["apiVersion"], obj["kind"])
        if validator is not None:
            validator.validate(obj)


@pytest.mark.shared(optional=True)  # the render is checked without ../shared, the CRD schemas with it
@pytest.mark.parametrize("nodes", [1, 3, 64])
@pytest.mark.parametrize("runtime", RUNTIMES)
def test_bundled_runtime_renders_and_matches_crd_schemas(runtime: str, nodes: int) -> None:

    command = ["tune", "run"] if runtime.startswith("torchtune") and nodes == 1 else ["python", "train.py"]
    request = RenderRequest(overrides=JobOverrides(runtime=runtime, name="job", nodes=nodes, command=command))
    outcome = render_request(request, RuntimeRegistry())
    kinds = [o["kind"] for o in outcome.result.objects]
    assert kinds[-1] == "JobSet"
    jobset = outcome.result.objects[-1]
    total = sum(r["template"]["spec"]["parallelism"] for r in jobset["spec"]["replicatedJobs"])
    assert total >= nodes
    if not UPSTREAM.is_dir():
        pytest.skip("../shared is absent: CRD schemas not available")
    check_crd_schemas(outcome.result.objects)


def test_mpi_hostfile_lists_every_node_pod() -> None:
    request = RenderRequest(overrides=JobOverrides(runtime="deepspeed-distributed", name="ds", nodes=64))
    outcome = render_request(request, RuntimeRegistry())
    hostfile = next(o for o in outcome.result.objects if o["kind"] == "ConfigMap")["data"]["hostfile"]
    lines = hostfile.splitlines()
    assert len(lines) == 64  # 63 node pods + the launcher running as a node
    assert lines[0] == "ds-node-0-0.ds slots=1" and lines[-1] == "ds-launcher-0-0.ds slots=1"


def test_intel_mpi_hostfile_needs_allow_extensions(tmp_path) -> None:
    from ktrain.errors import ValidationFailedError

    runtime = yaml.safe_load(open(RuntimeRegistry().get("deepspeed-distributed").path))  # noqa: SIM115
    runtime["metadata"]["name"] = "intel-mpi"
    runtime["spec"]["mlPolicy"]["mpi"]["mpiImplementation"] = "Intel"
    path = tmp_path / "intel.yaml"
    path.write_text(yaml.safe_dump(runtime))
    registry = RuntimeRegistry(files=[str(path)])
    request = RenderRequest(overrides=JobOverrides(runtime="intel-mpi", name="im", nodes=2))
    with pytest.raises(ValidationFailedError, match='Unsupported value: "Intel"'):
        render_request(request, registry)
    request.allow_extensions = True
    outcome = render_request(request, registry)
    hostfile = next(o for o in outcome.result.objects if o["kind"] == "ConfigMap")["data"]["hostfile"]
    assert hostfile == "im-node-0-0.im:1\nim-launcher-0-0.im:1\n"


def test_engine_output_is_deterministic_for_a_fixed_key() -> None:
    from ktrain.api import TrainJob
    from ktrain.engine import render

    runtime = RuntimeRegistry().get("deepspeed-distributed").runtime
    job = TrainJob.model_validate(
        {
            "metadata": {"name": "ds", "uid": "u1"},
            "spec": {"runtimeRef": {"name": "deepspeed-distributed"}, "trainer": {"numNodes": 3}},
        }
    )
    ctx = RenderContext(ssh_key=SshKeyPair(b"PRIV", b"PUB\n"))
    assert render(job, runtime, ctx).objects == render(job, runtime, ctx).objects
    assert "PRIV" not in repr(ctx)
