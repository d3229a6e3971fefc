"""Write the golden cases tests/golden/cases/trainjobstatus/bundled-<runtime>/: every bundled runtime
rendered with the controller's feature gate TrainJobStatus on.

The expectation is not ktrain's gate-on render: it is the gate-off render (which the other golden
and conformance cases hold to the controller) with ENGINE.md §6.7 applied by the code below, written
from upstream `pkg/runtime/framework/plugins/trainjobstatus/trainjobstatus.go` and its test
(`TestEnforceMLPolicy`, `TestBuild`), independently of `ktrain.engine.plugins.trainjobstatus`:

- every container (not init containers) of the first replicatedJob labelled ancestor `trainer`
  gets the three env vars (upserted by name) and the mount (upserted by mountPath);
- that replicatedJob's pod spec gets the projected volume (upserted by name);
- a ConfigMap `<job>-tls-config` with `ca.crt` (empty: an offline render cannot know the CA).

Run: `PYTHONPATH=. python tests/golden/make_trainjobstatus_cases.py` (rewrites the cases).
"""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
OUT = Path(__file__).parent / "cases" / "trainjobstatus"
NAME, NAMESPACE, UID = "tjs", "team-a", "00000000-0000-0000-0000-0000000000d1"
SOURCE = (
    "# source: ENGINE.md §6.7 | upstream pkg/runtime/framework/plugins/trainjobstatus/trainjobstatus_test.go:"
    "TestEnforceMLPolicy, TestBuild @ 8c0f5059bd51ec3ba6d6a6a7b2e1471de7bc13b3 (applied to the gate-off render "
    "by tests/golden/make_trainjobstatus_cases.py)\n"
)
URL = (
    "https://kubeflow-trainer-controller-manager.kubeflow-system.svc:10443"
    f"/apis/trainer.kubeflow.org/v1alpha1/namespaces/{NAMESPACE}/trainjobs/{NAME}/status"
)
ENVS = [
    {"name": "KUBEFLOW_TRAINER_SERVER_URL", "value": URL},
    {"name": "KUBEFLOW_TRAINER_SERVER_CA_CERT", "value": "/var/run/secrets/kubeflow/trainer/ca.crt"},
    {"name": "KUBEFLOW_TRAINER_SERVER_TOKEN", "value": "/var/run/secrets/kubeflow/trainer/token"},
]
ARGS = "# the controller's feature gate TrainJobStatus on\n--feature-gates\nTrainJobStatus=true\n"
MOUNT = {"name": "kubeflow-trainer-token", "mountPath": "/var/run/secrets/kubeflow/trainer", "readOnly": True}
VOLUME = {
    "name": "kubeflow-trainer-token",
    "projected": {
        "sources": [
            {
                "serviceAccountToken": {
                    "audience": f"trainer.kubeflow.org/v1alpha1/namespaces/{NAMESPACE}/trainjobs/{NAME}/status",
                    "expirationSeconds": 3600,
                    "path": "token",
                }
            },
            {"configMap": {"name": f"{NAME}-tls-config", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
        ]
    },
}


# Policies whose plugin leaves trainer.env to the JobSet builder (ENGINE.md §5.6: JAX appends it after
# JAX_*, MPI's launcher after OMPI_*), so it lands after the three variables.
BUILD_TIME_ENV = {"mpi", "jax"}


def _upsert(items: list[dict[str, Any]], new: dict[str, Any], key: str) -> None:
    for i, old in enumerate(items):
        if old.get(key) == new[key]:
            items[i] = copy.deepcopy(new)
            return
    items.append(copy.deepcopy(new))


def apply_section_6_7(objects: list[dict[str, Any]], build_time_env: set[str]) -> list[dict[str, Any]]:
    """`build_time_env`: the TrainJob env names the JobSet builder (not an ML plugin) adds, at Build,
    after the EnforceMLPolicy stage: the three variables go before them (ENGINE.md §5.4, §5.6)."""
    out = copy.deepcopy(objects)
    jobset = next(o for o in out if o["kind"] == "JobSet")
    for rjob in jobset["spec"]["replicatedJobs"]:
        labels = rjob["template"].get("metadata", {}).get("labels", {})
        if labels.get("trainer.kubeflow.org/trainjob-ancestor-step") != "trainer":
            continue
        pod = rjob["template"]["spec"]["template"]["spec"]
        for container in pod["containers"]:
            env_list = container.setdefault("env", [])
            tail = [e for e in env_list if e["name"] in build_time_env]
            if tail and env_list[-len(tail) :] == tail:
                del env_list[-len(tail) :]  # added at Build, after the three variables
            else:
                tail = []
            for env in ENVS:
                _upsert(env_list, env, "name")
            env_list += tail
            _upsert(container.setdefault("volumeMounts", []), MOUNT, "mountPath")
        _upsert(pod.setdefault("volumes", []), VOLUME, "name")
        break  # FindPodSetByAncestor: the first one
    owner = jobset["metadata"]["ownerReferences"]
    tls = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": f"{NAME}-tls-config", "namespace": NAMESPACE, "ownerReferences": owner},
        "data": {"ca.crt": ""},
    }
    return [tls, *out]


def main() -> None:
    for runtime_file in sorted((ROOT / "runtimes").glob("*.yaml")):
        runtime = yaml.safe_load(runtime_file.read_text())
        name = runtime["metadata"]["name"]
        case = OUT / f"bundled-{name}"
        case.mkdir(parents=True, exist_ok=True)
        job = {
            "apiVersion": "trainer.kubeflow.org/v1alpha1",
            "kind": "TrainJob",
            "metadata": {"name": NAME, "namespace": NAMESPACE, "uid": UID},
            "spec": {"runtimeRef": {"name": name}, "trainer": {"numNodes": 2, "env": [{"name": "LR", "value": "1"}]}},
        }
        (case / "trainjob.yaml").write_text(
            f"# source: a TrainJob on the bundled runtime {name} (runtimes/{runtime_file.name})\n" + yaml.safe_dump(job)
        )
        (case / "runtime.yaml").write_text(runtime_file.read_text())
        (case / "args.txt").write_text(ARGS)
        argv = [sys.executable, "-m", "ktrain", "job", "render", "-f", str(case / "trainjob.yaml")]
        argv += ["--runtime-file", str(case / "runtime.yaml")]
        off = subprocess.run(argv, capture_output=True, text=True, check=True, cwd=ROOT)
        objects = [d for d in yaml.safe_load_all(off.stdout) if d]
        secrets = [o["metadata"]["name"] for o in objects if o["kind"] == "Secret"]
        later = {"LR"} if BUILD_TIME_ENV & set(runtime["spec"].get("mlPolicy", {})) else set()
        expected = yaml.safe_dump_all(apply_section_6_7(objects, later), sort_keys=False)
        (case / "expected.yaml").write_text(SOURCE + expected)
        ignore = [f"Secret/{s}/data/{k}" for s in secrets for k in ("ssh-privatekey", "ssh-publickey")]
        if ignore:
            (case / "ignore.txt").write_text("\n".join(ignore) + "\n")
        sys.stdout.write(f"{case.relative_to(ROOT)}\n")


if __name__ == "__main__":
    main()
