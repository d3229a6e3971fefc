"""A pod's own name used as its host name (issue #33, cause 4).

In v1 the name resolved (`tests/v1pods/model.py` v1_resolvable: training-operator's per-pod Service
of the pod's name, `common/service.go` CreateNewService); a JobSet pod's name does not
(`tests/v1pods/pods.py`: `<jobset>-<rjob>-<j>-<i>-<random>`), its host name `<...>-<j>-<i>.<jobset>`
does. The shell scripts below run for real with `/bin/sh`, with the env each JobSet pod gets.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from v1pods.model import Job, v1_pod_name, v1_resolvable
from v1pods.pods import container_env, expand, jobset_pods, main_container

from ktrain.convert import convert_documents
from ktrain.convert.report import APPROXIMATED, KEPT
from ktrain.inputs.documents import load_documents
from ktrain.inputs.registry import RuntimeRegistry
from ktrain.service.render import render_request
from ktrain.service.requests import RenderRequest

POD_NAME = {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}
SCRIPT = (
    'echo "local --local_addr=$POD_NAME"; echo "rdzv ${POD_NAME}:29400"; '
    'export MASTER_ADDR=$(POD_NAME); echo "master $MASTER_ADDR"; '
    'echo "log /logs/$POD_NAME.txt"; echo "host --master_addr $HOSTNAME"'
)


def pytorch(command: list[str], env: list[dict[str, Any]], **spec: Any) -> dict[str, Any]:
    container = {"name": "pytorch", "image": "torch:2", "command": command, "env": env}
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "pt"},
        "spec": {
            **spec,
            "pytorchReplicaSpecs": {"Worker": {"replicas": 3, "template": {"spec": {"containers": [container]}}}},
        },
    }


def render(job: dict[str, Any], tmp_path: Path) -> dict[str, Any]:
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(job))
    objects = render_request(RenderRequest(file=str(path)), RuntimeRegistry()).result.objects
    return next(o for o in objects if o["kind"] == "JobSet")


@pytest.mark.skipif(shutil.which("sh") is None, reason="needs a POSIX shell")
@pytest.mark.parametrize("generated", [False, True])
def test_shell_uses_of_the_pod_name_as_a_host_resolve_as_v1s_did(generated: bool, tmp_path: Path) -> None:
    job = pytorch(["/bin/sh", "-c", SCRIPT], [POD_NAME])
    if generated:
        job["spec"]["pytorchReplicaSpecs"]["Worker"]["restartPolicy"] = "Never"
    js = render(job, tmp_path)
    model = Job(job)
    resolvable = {p.host for p in jobset_pods(js)}
    assert len(v1_resolvable(model)) == 3 and v1_pod_name(model, "Worker", 0) in v1_resolvable(model)
    for pod in jobset_pods(js):
        container = main_container(pod)
        env = container_env(pod, container)
        argv = [expand(str(x), env) for x in container["command"]]
        run_env = {k: v for k, v in env.items() if not k.startswith("PET_")} | {
            "PATH": "/usr/bin:/bin",
            "HOSTNAME": pod.host.split(".")[0],
        }
        out = dict(
            line.split(" ", 1)
            for line in subprocess.run(
                argv, env=run_env, capture_output=True, text=True, check=True
            ).stdout.splitlines()
        )
        # as a host: the pod's resolvable name, as v1's pod name was
        assert out["local"] == f"--local_addr={pod.host}" and out["rdzv"] == f"{pod.host}:29400"
        assert out["master"] == pod.host and out["host"] == f"--master_addr {pod.host}"
        assert out["master"] in resolvable
        # as a name: still the pod's name (reported)
        assert out["log"] == f"/logs/{env['POD_NAME']}.txt" and env["POD_NAME"].startswith(pod.host.split(".")[0] + "-")


def test_every_rewrite_and_the_variable_itself_are_reported() -> None:
    job = pytorch(["/bin/sh", "-c", SCRIPT], [POD_NAME, {"name": "MASTER_ADDR", "value": "$(POD_NAME)"}])
    (conv,) = convert_documents(load_documents(yaml.safe_dump(job), "job.yaml"))
    rows = [r for r in conv.rows if "KTRAIN_POD_HOST" in r.note]
    assert {r.status for r in rows} == {KEPT, APPROXIMATED}
    var = next(r for r in conv.rows if r.field.endswith("containers[0].env[0]"))
    assert var.status == APPROXIMATED and "does not resolve" in var.note and "other uses keep" in var.note
    env = conv.trainjob["spec"]["trainer"]["env"]
    assert {"name": "MASTER_ADDR", "value": "$(KTRAIN_POD_HOST)"} in env


def test_a_pod_name_that_is_no_host_is_left_and_reported() -> None:
    job = pytorch(["python", "t.py", "--run-id=$(POD_NAME)"], [POD_NAME])
    (conv,) = convert_documents(load_documents(yaml.safe_dump(job), "job.yaml"))
    assert conv.trainjob["spec"]["trainer"]["command"] == ["python", "t.py", "--run-id=$(POD_NAME)"]
    assert not any(e["name"] == "KTRAIN_POD_HOST" for e in conv.trainjob["spec"]["trainer"]["env"])
    (row,) = [r for r in conv.rows if r.field.endswith("containers[0].env[0]")]
    assert row.status == APPROXIMATED and "JobSet pod's name" in row.note


def test_host_value_builds_jobsets_host_name_from_the_downward_api() -> None:
    from ktrain.convert.compat import Placement
    from ktrain.convert.pod_hosts import host_value

    one_job = host_value(Placement("node"))
    assert [e["name"] for e in one_job] == ["KTRAIN_HOST_JOBSET", "KTRAIN_HOST_POD_INDEX", "KTRAIN_POD_HOST"]
    assert one_job[-1]["value"] == "$(KTRAIN_HOST_JOBSET)-node-0-$(KTRAIN_HOST_POD_INDEX).$(KTRAIN_HOST_JOBSET)"
    per_job = host_value(Placement("node", per_job=True))
    assert per_job[2]["valueFrom"] == {"fieldRef": {"fieldPath": "metadata.labels['jobset.sigs.k8s.io/job-index']"}}
    assert per_job[-1]["value"] == (
        "$(KTRAIN_HOST_JOBSET)-node-$(KTRAIN_HOST_JOB_INDEX)-$(KTRAIN_HOST_POD_INDEX).$(KTRAIN_HOST_JOBSET)"
    )
