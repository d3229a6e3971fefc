"""The per-pod environment of the TensorFlow, PaddlePaddle and MXNet runtimes equals what the
Training Operator v1 controllers compute for the same job.

Each test runs the runtime's real wrapper (`/bin/sh -c SCRIPT ktrain-env /usr/bin/env`) with the
env JobSet gives a pod (downward API values, KTRAIN_ROLES, PET_NNODES from the torch policy) and
compares the exported variables with a Python transcription of the v1 Go code, evaluated with
JobSet's host names in place of v1's per-pod Services:

- TensorFlow: `pkg/controller.v1/tensorflow/tensorflow.go` genTFConfigJSONStr / genClusterSpec
  (evaluator left out of the cluster; `"environment": "cloud"`; sparse form with
  enableDynamicWorker) and `tfjob_controller.go` SetClusterSpec / isDistributed (no TF_CONFIG
  when the job has exactly one replica).
- PaddlePaddle: `pkg/controller.v1/paddlepaddle/envvar.go` setPodEnv (collective mode: worker 0
  advertises its pod IP; PS mode: master 0 does, PADDLE_SERVER_NUM / PADDLE_TRAINER_NUM = 1).
- MXNet: `pkg/controller.v1/mxnet/mxjob_controller.go` SetClusterSpec + `mxnet.go` genMXConfig
  (MX_CONFIG with url/port per replica, tuner labels, DMLC_* from the scheduler's first host,
  server/worker counts, DMLC_WORKER_ID for workers).

Go's encoding/json writes struct fields in declaration order, map keys sorted, no spaces: the
oracles use json.dumps(separators=(",", ":")) with sorted map keys the same way.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable

import pytest

from ktrain.convert import podenv

pytestmark = pytest.mark.skipif(shutil.which("sh") is None, reason="needs a POSIX shell")

JS = "job"  # the JobSet (= TrainJob = v1 job) name


def run_wrapper(framework: str, roles: str, rjob: str, index: int, extra: dict[str, str] | None = None) -> dict:
    env = {
        "PATH": "/usr/bin:/bin",
        "KTRAIN_JOBSET": JS,
        "KTRAIN_RJOB": rjob,
        "KTRAIN_POD_INDEX": str(index),
        "KTRAIN_POD_IP": "10.0.0.7",
        "KTRAIN_ROLES": roles,
        **(extra or {}),
    }
    out = subprocess.run(
        [*podenv.wrapper_command(framework), "/usr/bin/env", "-0"], env=env, capture_output=True, check=True
    ).stdout
    items = [item.split("=", 1) for item in out.decode().split("\0") if item]
    return {k: v for k, v in items if not k.startswith("KTRAIN_") and k not in ("PATH", "PWD", "SHLVL", "_")}


def jobset_host(rjob: str, index: int) -> str:
    return f"{JS}-{rjob}-0-{index}.{JS}"


def go_json(value: object) -> str:
    return json.dumps(value, separators=(",", ":"))


# --------------------------------------------------------------------------- TensorFlow


def tf_v1(replicas: dict[str, int], ports: dict[str, int], rtype: str, index: int, host: Callable, sparse=False):
    """genTFConfigJSONStr, with `host(rt, i)` for v1's `<job>-<rt>-<i>.<ns>.svc`."""
    total = sum(replicas.values())
    if total == 1:  # isDistributed
        return None
    cluster = {}
    for rt in sorted(replicas):  # a Go map: json sorts the keys
        if rt == "evaluator":
            continue
        cluster[rt] = [f"{host(rt, i)}:{ports[rt]}" for i in range(replicas[rt])]
    task = {"type": rtype, "index": index}
    if sparse:
        sc: dict[str, object] = {"worker": {}, "ps": []}
        if rtype == "ps":
            sc["ps"] = [cluster[rtype][index]]
        elif rtype == "worker":
            sc["ps"] = cluster.get("ps", [])
            sc["worker"] = {str(index): cluster[rtype][index]}
        # SparseClusterSpec declares Worker before PS
        return go_json({"sparseCluster": {"worker": sc["worker"], "ps": sc["ps"]}, "task": task})
    return go_json({"cluster": cluster, "task": task, "environment": "cloud"})


TF_RJOB = {"worker": "node", "ps": "ps", "chief": "chief", "evaluator": "evaluator", "master": "master"}


def tf_roles(replicas: dict[str, int], ports: dict[str, int], star: bool = False) -> str:
    return podenv.roles_value(
        [(TF_RJOB[rt], rt, "*" if star and rt == "worker" else str(n), ports[rt]) for rt, n in replicas.items()]
    )


@pytest.mark.parametrize("workers", [1, 2, 8])
@pytest.mark.parametrize("shape", ["workers", "ps", "chief-ps-evaluator"])
def test_tf_config_matches_the_v1_controller(workers: int, shape: str) -> None:
    replicas = {"worker": workers}
    if shape != "workers":
        replicas["ps"] = 2
    if shape == "chief-ps-evaluator":
        replicas |= {"chief": 1, "evaluator": 1}
    ports = dict.fromkeys(replicas, 2222) | {"ps": 2223}
    roles = tf_roles(replicas, ports)

    def ours(rt: str, i: int) -> str:
        return jobset_host(TF_RJOB[rt], i)

    for rt, n in replicas.items():
        for i in range(n):
            env = run_wrapper("tensorflow", roles, TF_RJOB[rt], i)
            assert env.get("TF_CONFIG") == tf_v1(replicas, ports, rt, i, ours), (rt, i)


def test_tf_node_count_follows_the_torch_policy_count() -> None:
    """The bundled runtime's `*` count is PET_NNODES (what --nodes sets)."""
    replicas, ports = {"worker": 8}, {"worker": 2222}
    env = run_wrapper("tensorflow", tf_roles(replicas, ports, star=True), "node", 5, {"PET_NNODES": "8"})
    assert env["TF_CONFIG"] == tf_v1(replicas, ports, "worker", 5, lambda rt, i: jobset_host("node", i))


def test_tf_single_replica_gets_no_tf_config() -> None:
    env = run_wrapper("tensorflow", tf_roles({"worker": 1}, {"worker": 2222}), "node", 0)
    assert "TF_CONFIG" not in env


@pytest.mark.parametrize("rt", ["worker", "ps", "chief"])
def test_tf_sparse_cluster_with_dynamic_workers(rt: str) -> None:
    replicas = {"worker": 2, "ps": 2, "chief": 1}
    ports = {"worker": 2222, "ps": 2222, "chief": 2222}
    env = run_wrapper("tensorflow", tf_roles(replicas, ports), TF_RJOB[rt], 0, {"KTRAIN_TF_SPARSE": "1"})
    expected = tf_v1(replicas, ports, rt, 0, lambda r, i: jobset_host(TF_RJOB[r], i), sparse=True)
    assert env["TF_CONFIG"] == expected


def test_tf_v1_oracle_golden() -> None:
    """The oracle itself, checked by hand against genClusterSpec for 1 PS + 2 workers:
    `<job>-<rt>-<i>.<ns>.svc:<port>`, keys sorted, evaluator absent, environment cloud."""
    got = tf_v1(
        {"ps": 1, "worker": 2, "evaluator": 1},
        {"ps": 2222, "worker": 2222, "evaluator": 2222},
        "worker",
        1,
        lambda rt, i: f"dist-{rt}-{i}.ns.svc",
    )
    assert got == (
        '{"cluster":{"ps":["dist-ps-0.ns.svc:2222"],"worker":["dist-worker-0.ns.svc:2222","dist-worker-1.ns.svc:2222"]},'
        '"task":{"type":"worker","index":1},"environment":"cloud"}'
    )


# --------------------------------------------------------------------------- PaddlePaddle


def paddle_v1(replicas: dict[str, int], ports: dict[str, int], rtype: str, rank: int, host: Callable) -> dict:
    """setPodEnv (POD_IP_DUMMY's `$(...)` reference resolved to the pod IP, as the kubelet does)."""
    env = {"PYTHONUNBUFFERED": "1", "PADDLE_JOB_ID": JS, "PADDLE_NNODES": str(sum(replicas.values()))}
    if "master" not in replicas:
        if rank == 0:
            env |= {"POD_IP_DUMMY": "10.0.0.7", "PADDLE_MASTER": f"10.0.0.7:{ports['worker']}"}
        else:
            env["PADDLE_MASTER"] = f"{host('worker', 0)}:{ports['worker']}"
    else:
        if rank == 0 and rtype == "master":
            env |= {"POD_IP_DUMMY": "10.0.0.7", "PADDLE_MASTER": f"10.0.0.7:{ports['master']}"}
        else:
            env["PADDLE_MASTER"] = f"{host('master', 0)}:{ports['master']}"
        env["PADDLE_SERVER_NUM" if rtype == "master" else "PADDLE_TRAINER_NUM"] = "1"
    return env


PADDLE_RJOB = {"worker": "node", "master": "master"}


@pytest.mark.parametrize("workers", [1, 2, 8])
@pytest.mark.parametrize("ps_mode", [False, True])
def test_paddle_env_matches_the_v1_controller(workers: int, ps_mode: bool) -> None:
    replicas = {"worker": workers} | ({"master": 2} if ps_mode else {})
    ports = {"worker": 36543, "master": 36600}
    roles = podenv.roles_value([(PADDLE_RJOB[rt], rt, str(n), ports[rt]) for rt, n in replicas.items()])
    for rt, n in replicas.items():
        for i in range(n):
            env = run_wrapper("paddle", roles, PADDLE_RJOB[rt], i)
            expected = paddle_v1(replicas, ports, rt, i, lambda r, k: jobset_host(PADDLE_RJOB[r], k))
            assert env == expected, (rt, i)


# --------------------------------------------------------------------------- MXNet


def mxnet_v1(replicas: dict[str, int], ports: dict[str, int], labels: dict[str, str], rtype: str, index: int, host):
    cluster = {rt: [{"url": host(rt, i), "port": ports[rt]} for i in range(n)] for rt, n in sorted(replicas.items())}
    config = {
        "cluster": cluster,
        "labels": {rt: labels.get(rt, "") for rt in sorted(replicas)},
        "task": {"type": rtype, "index": index},
    }
    sched = cluster.get("scheduler") or []
    env = {
        "MX_CONFIG": go_json(config),
        "DMLC_PS_ROOT_PORT": str(sched[0]["port"] if sched else 0),
        "DMLC_PS_ROOT_URI": sched[0]["url"] if sched else "",
        "DMLC_NUM_SERVER": str(len(cluster.get("server", []))),
        "DMLC_NUM_WORKER": str(len(cluster.get("worker", []))),
        "DMLC_ROLE": rtype,
        "DMLC_USE_KUBERNETES": "1",
    }
    if rtype == "worker":
        env["DMLC_WORKER_ID"] = str(index)
    return env


MX_RJOB = {"worker": "node", "scheduler": "scheduler", "server": "server", "tuner": "node"}


@pytest.mark.parametrize("workers", [1, 2, 8])
def test_mxnet_env_matches_the_v1_controller(workers: int) -> None:
    replicas = {"scheduler": 1, "server": 2, "worker": workers}
    ports = {"scheduler": 9091, "server": 9092, "worker": 9093}
    roles = podenv.roles_value([(MX_RJOB[rt], rt, str(n), ports[rt]) for rt, n in replicas.items()])
    for rt, n in replicas.items():
        for i in range(n):
            env = run_wrapper("mxnet", roles, MX_RJOB[rt], i)
            assert env == mxnet_v1(replicas, ports, {}, rt, i, lambda r, k: jobset_host(MX_RJOB[r], k)), (rt, i)


def test_mxnet_tuner_labels_and_no_scheduler() -> None:
    replicas = {"tunertracker": 1, "tunerserver": 1, "tuner": 1}
    rjobs = {"tunertracker": "tunertracker", "tunerserver": "tunerserver", "tuner": "node"}
    ports = dict.fromkeys(replicas, 9091)
    roles = podenv.roles_value([(rjobs[rt], rt, "1", 9091) for rt in replicas])
    env = run_wrapper("mxnet", roles, "tunerserver", 0, {"KTRAIN_MX_LABEL_tunerserver": "key1"})
    assert env == mxnet_v1(
        replicas, ports, {"tunerserver": "key1"}, "tunerserver", 0, lambda r, k: jobset_host(rjobs[r], k)
    )


def test_wrapper_execs_the_program_with_its_arguments() -> None:
    out = subprocess.run(
        [*podenv.wrapper_command("paddle"), "printf", "%s|", "a b", "c"],
        env={
            "PATH": "/usr/bin:/bin",
            "KTRAIN_JOBSET": JS,
            "KTRAIN_RJOB": "node",
            "KTRAIN_POD_INDEX": "0",
            "KTRAIN_ROLES": "node:worker:1:36543",
        },
        capture_output=True,
        check=True,
    ).stdout
    assert out == b"a b|c|"


def test_bundled_runtime_files_are_in_sync_with_the_wrapper() -> None:
    from ktrain.inputs.registry import RuntimeRegistry

    registry = RuntimeRegistry()
    for framework, (name, *_rest) in podenv.BUNDLED.items():
        entry = registry.get(name)
        assert entry.document is not None
        expected = podenv.bundled_runtime(framework)
        data = dict(entry.document.data)
        assert data == expected, name


# --------------------------------------------------------------------------- fixed counts: plain env


def kubelet_expand(env: list[dict], pod: dict[str, str]) -> dict[str, str]:
    """The kubelet's env: downward-API values, then `$(VAR)` references to earlier variables
    (k8s.io/kubernetes third_party/forked/golang/expansion)."""
    import re

    out: dict[str, str] = {}
    for item in env:
        if "valueFrom" in item:
            path = item["valueFrom"]["fieldRef"]["fieldPath"]
            out[item["name"]] = pod[path]
        else:
            out[item["name"]] = re.sub(r"\$\((\w+)\)", lambda m: out.get(m.group(1), m.group(0)), item["value"])
    return out


def pod_fields(index: int) -> dict[str, str]:
    from ktrain import constants as c

    return {
        f"metadata.labels['{c.JOBSET_NAME_LABEL}']": JS,
        c.COMPLETION_INDEX_FIELD_PATH: str(index),
        "status.podIP": "10.0.0.7",
    }


@pytest.mark.parametrize("workers", [1, 2, 8])
@pytest.mark.parametrize("sparse", [False, True])
def test_tf_plain_env_of_a_generated_runtime_matches_the_v1_controller(workers: int, sparse: bool) -> None:
    replicas = {"worker": workers, "ps": 2, "chief": 1, "evaluator": 1}
    ports = {"worker": 2222, "ps": 2223, "chief": 2222, "evaluator": 2222}
    roles = [(TF_RJOB[rt], rt, n, ports[rt]) for rt, n in replicas.items()]
    for rt, n in replicas.items():
        for i in range(n):
            env = podenv.reference_env() + podenv.tf_static_env(roles, TF_RJOB[rt], sparse)
            got = kubelet_expand(env, pod_fields(i)).get("TF_CONFIG")
            assert got == tf_v1(replicas, ports, rt, i, lambda r, k: jobset_host(TF_RJOB[r], k), sparse), (rt, i)


@pytest.mark.parametrize("workers", [1, 2, 8])
def test_mxnet_plain_env_of_a_generated_runtime_matches_the_v1_controller(workers: int) -> None:
    replicas = {"scheduler": 1, "server": 2, "worker": workers}
    ports = {"scheduler": 9091, "server": 9092, "worker": 9093}
    roles = [(MX_RJOB[rt], rt, n, ports[rt]) for rt, n in replicas.items()]
    for rt, n in replicas.items():
        for i in range(n):
            env = podenv.reference_env() + podenv.mxnet_static_env(roles, MX_RJOB[rt], {"server": "k"})
            got = {k: v for k, v in kubelet_expand(env, pod_fields(i)).items() if not k.startswith("KTRAIN_")}
            assert got == mxnet_v1(replicas, ports, {"server": "k"}, rt, i, lambda r, k: jobset_host(MX_RJOB[r], k))


def test_paddle_plain_env_differs_from_v1_only_in_rank_0s_master_address() -> None:
    replicas, ports = {"worker": 4}, {"worker": 36543}
    roles = [("node", "worker", 4, 36543)]
    for i in range(4):
        env = kubelet_expand(podenv.reference_env() + podenv.paddle_static_env(roles, "node"), pod_fields(i))
        env = {k: v for k, v in env.items() if not k.startswith("KTRAIN_")}
        expected = paddle_v1(replicas, ports, "worker", i, lambda r, k: jobset_host("node", k))
        if i == 0:  # v1: the pod's own IP; here: its host name (documented approximation)
            expected.pop("POD_IP_DUMMY")
            expected["PADDLE_MASTER"] = f"{jobset_host('node', 0)}:36543"
        assert env == expected
