"""Property tests (Hypothesis) over `job convert`'s input: v1 jobs with one value somewhere
replaced by anything YAML can hold. The outcome is a conversion that renders, or a KtrainError
(never another exception), and it comes quickly.

Bounded for CI like the other fuzz tests; `KTRAIN_FUZZ_SCALE=20` searches longer.
"""

from __future__ import annotations

import copy
import os
import time
from typing import Any

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from ktrain.convert import convert_documents  # noqa: E402
from ktrain.errors import KtrainError  # noqa: E402
from ktrain.inputs.documents import load_documents  # noqa: E402
from ktrain.output.yamltext import dump  # noqa: E402
from ktrain.service.convert import check_conversion  # noqa: E402

SECONDS = 5.0
SCALE = float(os.environ.get("KTRAIN_FUZZ_SCALE", "1"))
BOUNDED = settings(
    max_examples=max(1, int(200 * SCALE)),
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def _replica(name: str, n: int, **extra: Any) -> dict[str, Any]:
    container = {"name": name, "image": "img:1", "command": ["run", "x-master-0"], "env": [{"name": "A", "value": "1"}]}
    template = {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [container], "volumes": [{"name": "v"}]}}
    return {"replicas": n, "template": template, **extra}


BASES: list[dict[str, Any]] = [
    {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "x", "labels": {"kueue.x-k8s.io/queue-name": "q"}},
        "spec": {
            "nprocPerNode": "2",
            "runPolicy": {"backoffLimit": 2, "schedulingPolicy": {"queue": "v"}},
            "elasticPolicy": {"minReplicas": 1, "maxReplicas": 2},
            "pytorchReplicaSpecs": {
                "Master": _replica("pytorch", 1, restartPolicy="ExitCode"),
                "Worker": _replica("pytorch", 2),
            },
        },
    },
    {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"generateName": "x-"},
        "spec": {"tfReplicaSpecs": {"Chief": _replica("tensorflow", 1), "PS": _replica("tensorflow", 2)}},
    },
    {
        "apiVersion": "kubeflow.org/v2beta1",
        "kind": "MPIJob",
        "metadata": {"name": "x"},
        "spec": {
            "slotsPerWorker": 2,
            "mpiReplicaSpecs": {"Launcher": _replica("l", 1), "Worker": _replica("w", 2)},
        },
    },
    {
        "apiVersion": "kubeflow.org/v1",
        "kind": "XGBoostJob",
        "metadata": {"name": "x"},
        "spec": {"xgbReplicaSpecs": {"Master": _replica("xgboost", 1), "Worker": _replica("xgboost", 3)}},
    },
]

ANY = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**40), max_value=2**40)
    | st.text(max_size=20)
    | st.sampled_from(["x-master-0", "x-worker-9.x-worker", "Never", "OnFailure", "latest", "0"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=6,
)


def _paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, (*path, i))
    return out


@BOUNDED
@given(base=st.sampled_from(range(len(BASES))), pick=st.integers(min_value=0), value=ANY)
def test_any_value_anywhere_converts_or_is_a_clear_error(base: int, pick: int, value: Any) -> None:
    job = copy.deepcopy(BASES[base])
    paths = _paths(job)[1:]
    path = paths[pick % len(paths)]
    target = job
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = value
    started = time.monotonic()
    try:
        for conv in convert_documents(load_documents(dump(job), "job.yaml")):
            check_conversion(conv, None)
    except KtrainError as exc:
        assert exc.message
    finally:
        assert time.monotonic() - started < SECONDS
