"""v1's pod labels on JobSet pods (issue #33, cause 3), judged against `tests/v1pods/model.py`
`v1_labels` (training-operator `common/pod.go` createNewPod + GenLabels + each IsMasterRole;
mpi-operator `mpi_job_controller.go` defaultLabels and newWorker). `test_pod_env.py` compares the
downward-API env of every pod; here: selectors, what has no counterpart, and the layouts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from v1pods.model import Job, v1_labels
from v1pods.pods import field_value, jobset_pods

from ktrain.convert import convert_documents
from ktrain.convert.report import APPROXIMATED
from ktrain.inputs.documents import load_documents
from ktrain.inputs.registry import RuntimeRegistry
from ktrain.service.render import render_request
from ktrain.service.requests import RenderRequest

P = "training.kubeflow.org/"


def convert(job: dict[str, Any]) -> Any:
    (conv,) = convert_documents(load_documents(yaml.safe_dump(job), "job.yaml"))
    return conv


def jobset(job: dict[str, Any], tmp_path: Path) -> dict[str, Any]:
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(job))
    objects = render_request(RenderRequest(file=str(path)), RuntimeRegistry()).result.objects
    return next(o for o in objects if o["kind"] == "JobSet")


def tfjob(pod_extra: dict[str, Any]) -> dict[str, Any]:
    def replica(n: int) -> dict[str, Any]:
        return {
            "replicas": n,
            "template": {"spec": {"containers": [{"name": "tensorflow", "image": "tf:2"}], **pod_extra}},
        }

    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": "tf"},
        "spec": {"tfReplicaSpecs": {"Chief": replica(1), "Worker": replica(3)}},
    }


def anti_affinity(key: str, value: str) -> dict[str, Any]:
    term = {"labelSelector": {"matchLabels": {key: value}}, "topologyKey": "kubernetes.io/hostname"}
    return {"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}}


def test_a_selector_on_v1s_step_wide_labels_matches_the_pods_that_v1s_matched(tmp_path: Path) -> None:
    """One worker per node, by an anti-affinity on job-name and replica-type: the JobSet pods carry
    the labels with v1's values, so the selector selects the same pods."""
    job = tfjob(anti_affinity(P + "job-name", "tf"))
    worker = job["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]
    terms = worker["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    terms.append({"labelSelector": {"matchLabels": {P + "replica-type": "worker"}}, "topologyKey": "zone"})
    js = jobset(job, tmp_path)
    model = Job(job)
    places = {"chief": "Chief", "node": "Worker"}
    mentioned = {"chief": (P + "job-name",), "node": (P + "job-name", P + "replica-type")}
    for pod in jobset_pods(js):
        want = v1_labels(model, places[pod.rjob], pod.index)
        for key in mentioned[pod.rjob]:  # the labels a template mentions are put on its pods
            assert pod.labels.get(key) == want[key], (pod.host, key)
        selected = {  # every v1 selector term of this pod selects the pods v1's selected
            next(iter(t["labelSelector"]["matchLabels"].items()))
            for t in (
                pod.template["spec"]["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
            )
        }
        for key, value in selected:
            v1_selected = {
                (t, i)
                for t in ("Chief", "Worker")
                for i in range(model.replicas(t))
                if v1_labels(model, t, i).get(key) == value
            }
            now = {(places[q.rjob], q.index) for q in jobset_pods(js) if q.labels.get(key) == value}
            assert now == v1_selected, key


def test_replica_index_outside_a_field_ref_has_no_counterpart_and_is_reported() -> None:
    job = tfjob(anti_affinity(P + "replica-index", "0"))
    conv = convert(job)
    notes = [r for r in conv.rows if P + "replica-index" in r.note]
    assert notes and all(r.status == APPROXIMATED and "no counterpart" in r.note for r in notes)
    assert "job-completion-index" in notes[0].note


def test_jax_job_role_is_worker_0s_only_and_reported() -> None:
    """JAX's IsMasterRole is `index == 0`: no step-wide value, so no label and a report row."""
    env = [{"name": "ROLE", "valueFrom": {"fieldRef": {"fieldPath": f"metadata.labels['{P}job-role']"}}}]
    job = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "JAXJob",
        "metadata": {"name": "jx"},
        "spec": {
            "jaxReplicaSpecs": {
                "Worker": {
                    "replicas": 2,
                    "template": {
                        "spec": {"containers": [{"name": "jax", "image": "j:1", "command": ["python"], "env": env}]}
                    },
                }
            }
        },
    }
    conv = convert(job)
    assert any(P + "job-role" in r.note and r.status == APPROXIMATED for r in conv.rows)


def test_mpi_operator_labels_and_the_worker_index(tmp_path: Path) -> None:
    """mpi-operator labelled its pods job-role launcher / worker and the workers replica-index."""
    env = [
        {"name": "ROLE", "valueFrom": {"fieldRef": {"fieldPath": f"metadata.labels['{P}job-role']"}}},
        {"name": "INDEX", "valueFrom": {"fieldRef": {"fieldPath": f"metadata.labels['{P}replica-index']"}}},
    ]
    job = {
        "apiVersion": "kubeflow.org/v2beta1",
        "kind": "MPIJob",
        "metadata": {"name": "pi"},
        "spec": {
            "mpiReplicaSpecs": {
                "Launcher": {
                    "replicas": 1,
                    "template": {"spec": {"containers": [{"name": "l", "image": "m", "command": ["mpirun"]}]}},
                },
                "Worker": {
                    "replicas": 2,
                    "template": {"spec": {"containers": [{"name": "w", "image": "m", "env": env}]}},
                },
            }
        },
    }
    js = jobset(job, tmp_path)
    model = Job(job)
    for pod in (p for p in jobset_pods(js) if p.rjob == "node"):
        want = v1_labels(model, "Worker", pod.index)
        container = pod.template["spec"]["containers"][0]
        got = {
            e["name"]: field_value(pod, e["valueFrom"]["fieldRef"]["fieldPath"])
            for e in container["env"]
            if e["name"] in ("ROLE", "INDEX")
        }
        assert got == {"ROLE": want[P + "job-role"], "INDEX": want[P + "replica-index"]}


def test_static_labels_are_the_v1_controllers_and_reads_finds_them_anywhere() -> None:
    from ktrain.convert.common import Role
    from ktrain.convert.kinds import KINDS, V1, V2BETA1
    from ktrain.convert.pod_labels import reads, static_labels

    master = Role("Master", 1, None, {}, (), 0)
    assert static_labels(KINDS["PyTorchJob"], V1, master, "pt") == {
        "training.kubeflow.org/operator-name": "pytorchjob-controller",
        "training.kubeflow.org/job-name": "pt",
        "training.kubeflow.org/replica-type": "master",
        "training.kubeflow.org/job-role": "master",
    }
    worker = Role("Worker", 2, None, {}, (), 0)
    assert static_labels(KINDS["MPIJob"], V2BETA1, worker, "m") == {
        "training.kubeflow.org/operator-name": "mpi-operator",
        "training.kubeflow.org/job-name": "m",
        "training.kubeflow.org/job-role": "worker",
    }
    script = {"spec": {"containers": [{"command": ["sh", "-c", "echo training.kubeflow.org/replica-index"]}]}}
    assert reads(script) == {"training.kubeflow.org/replica-index"} and reads({"spec": {}}) == set()
