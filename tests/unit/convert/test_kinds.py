"""ktrain/convert/kinds.py: every field the v1 API types declare is known, and each one a job sets
gets a report row."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
import yaml
from v1convert import one

from ktrain.convert import kinds
from ktrain.convert.report import APPROXIMATED, DROPPED, KEPT

POD = {"containers": [{"name": "{c}", "image": "img:1", "command": ["run"]}]}


def _full_job(kind: str, api: str) -> dict[str, Any]:
    info = kinds.KINDS[kind]
    spec: dict[str, Any] = {}
    roles = {
        "PyTorchJob": ["Master", "Worker"],
        "TFJob": ["Chief", "PS", "Worker", "Evaluator"],
        "MPIJob": ["Launcher", "Worker"],
        "XGBoostJob": ["Master", "Worker"],
        "JAXJob": ["Worker"],
        "PaddleJob": ["Master", "Worker"],
        "MXJob": ["Scheduler", "Server", "Worker"],
    }[kind]
    pod = json.loads(json.dumps(POD).replace("{c}", info.container))
    pod["containers"][0].update({"env": [{"name": "A", "value": "1"}], "resources": {"limits": {"cpu": "1"}}})
    pod["nodeSelector"] = {"pool": "a"}
    spec[info.replica_key] = {
        r: {
            "replicas": 1 if r in ("Master", "Chief", "Launcher", "Scheduler") else 2,
            "restartPolicy": "OnFailure",
            "template": {"metadata": {"labels": {"a": "b"}}, "spec": copy.deepcopy(pod)},
        }
        for r in roles
    }
    spec["runPolicy"] = {
        "cleanPodPolicy": "None",
        "ttlSecondsAfterFinished": 1,
        "activeDeadlineSeconds": 2,
        "backoffLimit": 3,
        "suspend": False,
        "managedBy": "kubeflow.org/training-operator",
        "schedulingPolicy": {
            "minAvailable": 1,
            "queue": "q",
            "minResources": {"cpu": "1"},
            "priorityClass": "p",
            "scheduleTimeoutSeconds": 5,
        },
    }
    extra = {
        "PyTorchJob": {
            "nprocPerNode": "2",
            "elasticPolicy": {
                "minReplicas": 1,
                "maxReplicas": 3,
                "rdzvBackend": "c10d",
                "rdzvPort": 1,
                "rdzvHost": "h",
                "rdzvId": "i",
                "rdzvConf": [],
                "standalone": False,
                "nProcPerNode": 2,
                "maxRestarts": 1,
                "metrics": [],
            },
        },
        "TFJob": {"successPolicy": "AllWorkers", "enableDynamicWorker": True},
        "PaddleJob": {"elasticPolicy": {"minReplicas": 1, "maxReplicas": 2, "maxRestarts": 1, "metrics": []}},
        "MXJob": {"jobMode": "MXTrain"},
        "MPIJob": {
            "slotsPerWorker": 2,
            "runLauncherAsWorker": True,
            "sshAuthMountPath": "/home/u/.ssh",
            "launcherCreationPolicy": "WaitForWorkersReady",
            "mpiImplementation": "OpenMPI",
        }
        if api != kinds.V1
        else {"slotsPerWorker": 2, "cleanPodPolicy": "None", "mainContainer": "mpi"},
    }.get(kind, {})
    spec.update(extra)
    return {
        "apiVersion": api,
        "kind": kind,
        "metadata": {"name": "full", "namespace": "ns", "labels": {"x": "y"}, "annotations": {"z": "w"}, "uid": "u"},
        "spec": spec,
        "status": {"conditions": []},
    }


CASES = [(k, a) for k, info in kinds.KINDS.items() for a in info.api_versions]


@pytest.mark.parametrize(("kind", "api"), CASES, ids=[f"{k}-{a.split('/')[1]}" for k, a in CASES])
def test_every_v1_field_set_appears_in_the_report(kind: str, api: str) -> None:
    """Every field of the v1 API types (kinds.py: spec, runPolicy, schedulingPolicy, elasticPolicy,
    replica specs) that a job sets gets a report row; and the result renders."""
    job = _full_job(kind, api)
    assert set(job["spec"]) - {kinds.KINDS[kind].replica_key} | {kinds.KINDS[kind].replica_key} == set(
        kinds.spec_fields(kinds.KINDS[kind], api)
    )
    conv = one(yaml.safe_dump(job))
    rows = [r.field for r in conv.rows]

    def covered(path: str) -> bool:
        return any(r == path or r.startswith(path + ".") or r.startswith(path + "[") for r in rows)

    expected = ["apiVersion", "kind", "metadata.name", "metadata.namespace", "metadata.labels"]
    expected += ["metadata.annotations", "metadata.uid", "status"]
    for key, value in job["spec"].items():
        if key == kinds.KINDS[kind].replica_key:
            for role, rspec in value.items():
                for rkey in rspec:
                    expected.append(f"spec.{key}.{role}.{rkey}")
        elif isinstance(value, dict) and value:
            for sub, subvalue in value.items():
                if isinstance(subvalue, dict) and subvalue and sub == "schedulingPolicy":
                    expected += [f"spec.{key}.{sub}.{s}" for s in subvalue]
                else:
                    expected.append(f"spec.{key}.{sub}")
        else:
            expected.append(f"spec.{key}")
    missing = [p for p in expected if not covered(p)]
    assert not missing, missing
    for r in conv.rows:
        assert r.status in (KEPT, APPROXIMATED, DROPPED)
        if r.status != KEPT:
            assert r.note, r
