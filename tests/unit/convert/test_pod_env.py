"""Every pod of a converted v1 job gets the env and the program the v1 controller gave it.

For each v1 replica (type, index), `v1pods.model` computes what the v1 controller set (a
transcription of its Go code, see there); the rendered JobSet's pod that plays that replica is
evaluated by `v1pods.pods` (JobSet's labels and host names, the downward API, the kubelet's
`$(VAR)` rule, ktrain's shell wrappers run with a stub program). Both must agree on every
variable v1 set (and on the user's own) and on the program, with v1's host names read as the
names of the JobSet pods that play those replicas.

Which JobSet pod plays which v1 replica is the documented layout (docs/migrating-from-v1.md):
MPI's Launcher is `launcher`, its Workers `node`; PyTorch and XGBoost Master + Worker whose
templates differ only in command/args share `node` (pod 0 the Master, pod k+1 Worker k), else
the Master is `master` and Worker k the `node` step's Job k; otherwise the trainer's replica type
(Worker first) is `node` and every other type the step named after it. The program each pod
runs checks that the layout is the one used.

The few values ktrain cannot make v1's are listed in `EXCEPTIONS`; each must be in the job's
report, so a user reads it there.

Runs on every v1 example of ../shared (skipped when absent) and on the cases below.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import UPSTREAM
from v1convert import server_accepts
from v1pods.model import REPLICA_KEY, V1Pod, v1_pods
from v1pods.pods import Pod, jobset_pods, seen

from ktrain.convert import convert_documents
from ktrain.inputs.documents import load_documents
from ktrain.inputs.registry import RuntimeRegistry
from ktrain.service.render import render_request
from ktrain.service.requests import RenderRequest

pytestmark = pytest.mark.skipif(shutil.which("sh") is None, reason="needs a POSIX shell")

EXAMPLES = UPSTREAM / "training-operator" / "examples"
EXAMPLE_FILES = sorted(p.name for p in EXAMPLES.glob("*.yaml")) if EXAMPLES.is_dir() else []
TRAINER_ORDER = {
    "MPIJob": ("Launcher",),
    "TFJob": ("Worker", "Chief", "Master", "PS", "Evaluator"),
    "MXJob": ("Worker", "Scheduler", "Server", "Tuner", "TunerServer", "TunerTracker"),
}


def layout(job: dict[str, Any], jobset: dict[str, Any]) -> dict[tuple[str, int], tuple[str, int, int]]:
    """(v1 type, index) -> (rjob, job index, pod index), as docs/migrating-from-v1.md says."""
    kind = job["kind"]
    specs = job["spec"][REPLICA_KEY[kind]]
    counts = {t: (1 if s.get("replicas") is None else s["replicas"]) for t, s in specs.items()}
    rjobs = {r["name"] for r in jobset["spec"]["replicatedJobs"]}
    out: dict[tuple[str, int], tuple[str, int, int]] = {}
    if kind == "MPIJob":
        for t, n in counts.items():
            for k in range(n):
                out[(t, k)] = ("launcher", 0, 0) if t == "Launcher" else ("node", 0, k)
        return out
    if kind in ("PyTorchJob", "XGBoostJob") and "Master" in counts and "Worker" in counts:
        separate = "master" in rjobs
        out[("Master", 0)] = ("master", 0, 0) if separate else ("node", 0, 0)
        for k in range(counts["Worker"]):
            out[("Worker", k)] = ("node", k, 0) if separate else ("node", 0, k + 1)
        return out
    trainer = next(t for t in TRAINER_ORDER.get(kind, ("Worker", "Master")) if t in counts)
    for t, n in counts.items():
        for k in range(n):
            out[(t, k)] = ("node" if t == trainer else t.lower(), 0, k)
    return out


def v1_host_pattern(name: str) -> re.Pattern[str]:
    """A v1 pod's Service name (training-operator), or mpi-operator's `<pod>.<job>[-worker]`."""
    n = re.escape(name)
    return re.compile(rf"\b{n}-([a-z]+)-(\d+)(\.{n}(-worker)?)?\b")


# (kind, variable) -> the report row that says why ktrain's value differs from v1's.
EXCEPTIONS = {
    "torch policy": "PET_MASTER_PORT is v2's",
    "torch policy nproc": "v1 gave torchrun PET_NPROC_PER_NODE=",
    "elastic": "PET_NNODES",
    "paddle rank 0": "rank 0 names the master by its host name",
    "kubectl exec": "kubectl exec",
    "sshd": "sleep 365d",
    "user's PYTHONUNBUFFERED": "PYTHONUNBUFFERED",
    "pod name": "is the JobSet pod's name",
}


def exceptions(conv: Any, job: dict[str, Any], v1pod: V1Pod, got: Any) -> dict[str, str]:
    """Variables whose v1 value ktrain cannot give this pod -> which documented exception."""
    out: dict[str, str] = {}
    kind = job["kind"]
    specs = job["spec"][REPLICA_KEY[kind]]
    torch_policy = kind == "PyTorchJob" and (conv.runtime is None or "torch" in conv.runtime["spec"]["mlPolicy"])
    if torch_policy and "Master" in specs:
        out |= {"PET_MASTER_PORT": "torch policy", "PET_NPROC_PER_NODE": "torch policy"}
    elif torch_policy and got.env.get("PET_NPROC_PER_NODE") != v1pod.env.get("PET_NPROC_PER_NODE"):
        out["PET_NPROC_PER_NODE"] = "torch policy nproc"  # v2 counts the node's CPUs where v1 said auto
    if torch_policy and job["spec"].get("elasticPolicy") is not None:
        out["PET_NNODES"] = "elastic"
    if kind == "PaddleJob" and "POD_IP_DUMMY" in v1pod.env and not got.wrapped:
        out |= {"POD_IP_DUMMY": "paddle rank 0", "PADDLE_MASTER": "paddle rank 0"}
    if kind == "MPIJob" and job["apiVersion"] == "kubeflow.org/v1":
        out["OMPI_MCA_plm_rsh_agent"] = "kubectl exec"
    for spec in specs.values():  # the pod's own name: v1's resolved, JobSet's has a random suffix
        for ct in spec["template"]["spec"]["containers"]:
            for e in ct.get("env") or []:
                if ((e.get("valueFrom") or {}).get("fieldRef") or {}).get("fieldPath") == "metadata.name":
                    out[e["name"]] = "pod name"
    main = next(iter(specs.values()))["template"]["spec"]["containers"]
    if any(e.get("name") == "PYTHONUNBUFFERED" for ct in main for e in ct.get("env") or []):
        out["PYTHONUNBUFFERED"] = "user's PYTHONUNBUFFERED"
    return out


def check(path: Path) -> int:
    """Compare every pod; returns how many were compared."""
    job = yaml.safe_load(path.read_text())
    request = RenderRequest(file=str(path), allow_extensions=True)
    outcome = render_request(request, RuntimeRegistry())
    (conv,) = convert_documents(load_documents(path.read_text(), str(path)))
    jobset = next(o for o in outcome.result.objects if o["kind"] == "JobSet")
    if UPSTREAM.is_dir():
        for obj in outcome.result.objects:
            server_accepts(obj)
    pods = {(p.rjob, p.job_index, p.index): p for p in jobset_pods(jobset)}
    places = layout(job, jobset)
    assert sorted(places.values()) == sorted(pods), "every JobSet pod plays exactly one v1 replica"

    def host(rt: str, i: int) -> str:
        rtype = next(t for t, _ in places if t.lower() == rt)
        return pods[places[(rtype, i)]].host

    def pod_ip(rt: str, i: int) -> str:
        rtype = next(t for t, _ in places if t.lower() == rt)
        return pods[places[(rtype, i)]].ip

    pattern = v1_host_pattern(job["metadata"]["name"])

    def v2_name(m: re.Match[str]) -> str:
        rt, i = m.group(1), int(m.group(2))
        try:
            return host(rt, i)
        except (StopIteration, KeyError):
            return m.group(0)

    report = " | ".join(f"{r.field} {r.status} {r.target} {r.note}" for r in conv.rows)
    compared = 0
    for v1pod in v1_pods(job, host, pod_ip):
        pod: Pod = pods[places[(v1pod.rtype, v1pod.index)]]
        got = seen(pod)
        where = f"{path.name}: {v1pod.rtype} {v1pod.index} (pod {pod.host})"
        allowed = exceptions(conv, job, v1pod, got)
        for why in set(allowed.values()):
            assert EXCEPTIONS[why] in report, f"{where}: the report does not say {why!r}"
        for var, value in v1pod.env.items():
            if var in allowed:
                continue
            if var not in v1pod.controller:  # a v1 host name in the user's own value: the pod playing it
                value = pattern.sub(v2_name, value)
            assert got.env.get(var) == value, f"{where}: {var}={got.env.get(var)!r}, v1 gave {value!r}"
        program = [pattern.sub(v2_name, a) for a in v1pod.program]
        if job["kind"] == "MPIJob" and job["apiVersion"] == "kubeflow.org/v1" and program == ["sleep", "365d"]:
            assert EXCEPTIONS["sshd"] in report
            program = ["/usr/sbin/sshd", "-De"]
        assert (got.program, got.entrypoint) == (program, v1pod.entrypoint), where
        compared += 1
    return compared


@pytest.mark.shared
@pytest.mark.parametrize("name", EXAMPLE_FILES or ["<no ../shared>"])
def test_every_pod_of_each_upstream_example_sees_what_v1_gave_it(name: str) -> None:
    if not EXAMPLE_FILES:
        pytest.skip("../shared is absent: no v1 examples")
    assert check(EXAMPLES / name) >= 1


def _pytorch(master: dict[str, Any] | None, worker: dict[str, Any], workers: int = 2, **spec: Any) -> dict[str, Any]:
    specs = {}
    if master is not None:
        specs["Master"] = {"replicas": 1, "template": {"spec": {"containers": [master]}}}
    specs["Worker"] = {"replicas": workers, "template": {"spec": {"containers": [worker]}}}
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "pt", "namespace": "ml"},
        "spec": {**spec, "pytorchReplicaSpecs": specs},
    }


TORCH = {"name": "pytorch", "image": "torch:2"}
PER_POD_LABELS = ("replica-index", "replica-type", "job-name", "job-role", "operator-name")
CASES: dict[str, dict[str, Any]] = {
    # Master and Worker templates that differ beyond their command: `master` + one Job per Worker
    "pytorch-master-differs": _pytorch(
        {**TORCH, "args": ["--role", "master"], "resources": {"limits": {"cpu": "2"}}},
        {**TORCH, "args": ["--role", "worker"]},
        workers=3,
        nprocPerNode="2",
    ),
    # the same, on the image's entrypoint with different args (the upstream xgboost-dist examples)
    "pytorch-entrypoint-args-differ": _pytorch({**TORCH, "args": ["--master"]}, {**TORCH, "args": ["--worker"]}),
    # only the command differs: one node step, a shell switch runs the Master's on node 0
    "pytorch-command-differs": _pytorch(
        {**TORCH, "command": ["python", "master.py", "--addr", "pt-master-0"]},
        {**TORCH, "command": ["python", "worker.py", "--peer", "pt-worker-1"]},
        workers=3,
    ),
    "pytorch-same-template": _pytorch({**TORCH, "command": ["python", "train.py"]}, {**TORCH, "command": ["python"]})
    | {},
    "pytorch-workers-only": _pytorch(None, {**TORCH, "command": ["torchrun", "train.py"]}, workers=4),
    "pytorch-user-pythonunbuffered": _pytorch(
        {**TORCH, "command": ["python", "t.py"], "env": [{"name": "PYTHONUNBUFFERED", "value": "0"}]},
        {**TORCH, "command": ["python", "t.py"], "env": [{"name": "PYTHONUNBUFFERED", "value": "0"}]},
    ),
    "pytorch-elastic": _pytorch(
        None,
        {**TORCH, "command": ["torchrun", "train.py"]},
        workers=2,
        elasticPolicy={"minReplicas": 1, "maxReplicas": 3, "rdzvId": "x", "maxRestarts": 2},
    ),
    "xgboost-master-differs": {
        "apiVersion": "kubeflow.org/v1",
        "kind": "XGBoostJob",
        "metadata": {"name": "xgb"},
        "spec": {
            "xgbReplicaSpecs": {
                "Master": {
                    "replicas": 1,
                    "restartPolicy": "Never",
                    "template": {"spec": {"containers": [{"name": "xgboost", "image": "x:1", "args": ["--tracker"]}]}},
                },
                "Worker": {
                    "replicas": 3,
                    "restartPolicy": "Never",
                    "template": {"spec": {"containers": [{"name": "xgboost", "image": "x:1", "args": ["--train"]}]}},
                },
            }
        },
    },
    # PaddlePaddle collective: with a command (the wrapper gives rank 0 its pod IP), without one
    # (plain env: rank 0 names the master by its host name, reported), and PS mode.
    "paddle-collective-command": {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PaddleJob",
        "metadata": {"name": "pd"},
        "spec": {
            "paddleReplicaSpecs": {
                "Worker": {
                    "replicas": 3,
                    "template": {
                        "spec": {
                            "containers": [
                                {
                                    "name": "paddle",
                                    "image": "p:1",
                                    "command": ["python", "-m", "paddle.distributed.launch", "train.py"],
                                    "env": [{"name": "PYTHONUNBUFFERED", "value": "1"}],
                                }
                            ]
                        }
                    },
                }
            }
        },
    },
    "paddle-entrypoint": {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PaddleJob",
        "metadata": {"name": "pd"},
        "spec": {
            "paddleReplicaSpecs": {
                "Worker": {
                    "replicas": 2,
                    "restartPolicy": "Never",
                    "template": {"spec": {"containers": [{"name": "paddle", "image": "p:1"}]}},
                }
            }
        },
    },
    "paddle-ps": {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PaddleJob",
        "metadata": {"name": "pd", "namespace": "ml"},
        "spec": {
            "paddleReplicaSpecs": {
                role: {
                    "replicas": n,
                    "template": {
                        "spec": {
                            "containers": [
                                {
                                    "name": "paddle",
                                    "image": "p:1",
                                    "command": ["python", "train.py"],
                                    "ports": [{"name": "master", "containerPort": port}],
                                }
                            ]
                        }
                    },
                }
                for role, n, port in (("Master", 2, 36600), ("Worker", 2, 36543))
            }
        },
    },
    "tensorflow-chief-ps-evaluator-sparse": {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": "tf", "namespace": "team"},
        "spec": {
            "enableDynamicWorker": True,
            "tfReplicaSpecs": {
                role: {
                    "replicas": n,
                    "template": {"spec": {"containers": [{"name": "tensorflow", "image": "tf:2", "args": ["--x"]}]}},
                }
                for role, n in (("Chief", 1), ("PS", 2), ("Worker", 3), ("Evaluator", 1))
            },
        },
    },
    "tensorflow-workers-tf-config-host-in-args": {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": "tf"},
        "spec": {
            "tfReplicaSpecs": {
                "Worker": {
                    "replicas": 2,
                    "restartPolicy": "Never",
                    "template": {
                        "spec": {
                            "containers": [
                                {
                                    "name": "tensorflow",
                                    "image": "tf:2",
                                    "command": ["python", "t.py", "--chief=tf-worker-0:2222"],
                                }
                            ]
                        }
                    },
                }
            }
        },
    },
    "mxnet-scheduler-server-worker": {
        "apiVersion": "kubeflow.org/v1",
        "kind": "MXJob",
        "metadata": {"name": "mx"},
        "spec": {
            "jobMode": "MXTrain",
            "mxReplicaSpecs": {
                role: {
                    "replicas": n,
                    "template": {"spec": {"containers": [{"name": "mxnet", "image": "mx:1"}]}},
                }
                for role, n in (("Scheduler", 1), ("Server", 2), ("Worker", 2))
            },
        },
    },
    "mpi-v2beta1-entrypoint-workers": {
        "apiVersion": "kubeflow.org/v2beta1",
        "kind": "MPIJob",
        "metadata": {"name": "pi"},
        "spec": {
            "slotsPerWorker": 2,
            "mpiReplicaSpecs": {
                "Launcher": {
                    "replicas": 1,
                    "template": {
                        "spec": {
                            "containers": [
                                {
                                    "name": "l",
                                    "image": "mpi:1",
                                    "command": ["mpirun", "-H", "pi-worker-0.pi-worker:2,pi-worker-1.pi:2", "pi"],
                                }
                            ]
                        }
                    },
                },
                "Worker": {"replicas": 2, "template": {"spec": {"containers": [{"name": "w", "image": "mpi:1"}]}}},
            },
        },
    },
    "mpi-v1-sleeping-workers": {
        "apiVersion": "kubeflow.org/v1",
        "kind": "MPIJob",
        "metadata": {"name": "hv"},
        "spec": {
            "mpiReplicaSpecs": {
                "Launcher": {
                    "replicas": 1,
                    "template": {"spec": {"containers": [{"name": "mpi", "image": "h:1", "command": ["mpirun", "x"]}]}},
                },
                "Worker": {"replicas": 3, "template": {"spec": {"containers": [{"name": "mpi", "image": "h:1"}]}}},
            }
        },
    },
    "jax-workers": {
        "apiVersion": "kubeflow.org/v1",
        "kind": "JAXJob",
        "metadata": {"name": "jx"},
        "spec": {
            "jaxReplicaSpecs": {
                "Worker": {
                    "replicas": 3,
                    "template": {
                        "spec": {"containers": [{"name": "jax", "image": "j:1", "command": ["python", "j.py"]}]}
                    },
                }
            }
        },
    },
}


def _field(name: str, path: str) -> dict[str, Any]:
    return {"name": name, "valueFrom": {"fieldRef": {"fieldPath": path}}}


def _label(name: str, key: str) -> dict[str, Any]:
    return _field(name, f"metadata.labels['training.kubeflow.org/{key}']")


V1_LABEL_ENV = [_label(f"L_{k.upper().replace('-', '_')}", k) for k in PER_POD_LABELS]
CASES |= {
    # issue 33, cause 2: a Worker-only PyTorchJob without nprocPerNode whose runtime is generated
    # (restartPolicy Never): v1.8+ passed nprocPerNode "auto" on in PET_NPROC_PER_NODE
    "pytorch-workers-only-generated-cpu": _pytorch(
        None,
        {**TORCH, "command": ["python", "-m", "torch.distributed.run", "t.py"], "resources": {"limits": {"cpu": "4"}}},
        workers=2,
    ),
    # cause 3: downward-API env reading v1's pod labels; Master and Worker differ only in command, so
    # only the labels keep them apart (a Master step of its own: replica-type, job-role per step)
    "pytorch-v1-pod-labels": _pytorch(
        {**TORCH, "command": ["python", "m.py", "--rank=$(L_REPLICA_INDEX)"], "env": V1_LABEL_ENV},
        {**TORCH, "command": ["python", "w.py", "--rank=$(L_REPLICA_INDEX)"], "env": V1_LABEL_ENV},
        workers=3,
    ),
    "tensorflow-v1-pod-labels": {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": "tf"},
        "spec": {
            "tfReplicaSpecs": {
                role: {
                    "replicas": n,
                    "template": {
                        "spec": {
                            "containers": [
                                {"name": "tensorflow", "image": "tf:2", "command": ["python"], "env": V1_LABEL_ENV}
                            ]
                        }
                    },
                }
                for role, n in (("Chief", 1), ("PS", 2), ("Worker", 2))
            }
        },
    },
    # cause 4: the pod's name as its host (torchrun's --local_addr, a rendezvous endpoint, an env value)
    "pytorch-pod-name-as-host": _pytorch(
        None,
        {
            **TORCH,
            "command": ["torchrun", "--local_addr=$(POD_NAME)", "--rdzv_endpoint", "$(POD_NAME):29400", "t.py"],
            "env": [_field("POD_NAME", "metadata.name"), {"name": "MY_ADDR", "value": "$(POD_NAME)"}],
        },
        workers=3,
        elasticPolicy={"rdzvBackend": "c10d"},
    ),
    # ... on one Job per Worker (the Master's resources differ): the host has the Job's index
    "pytorch-pod-name-as-host-one-job-per-worker": _pytorch(
        {
            **TORCH,
            "command": ["python", "m.py", "--addr=$(POD_NAME)"],
            "env": [_field("POD_NAME", "metadata.name")],
            "resources": {"limits": {"cpu": "2"}},
        },
        {**TORCH, "command": ["python", "w.py", "--addr=$(POD_NAME)"], "env": [_field("POD_NAME", "metadata.name")]},
        workers=3,
    ),
    # ... through TensorFlow's env wrapper (bundled runtime)
    "tensorflow-pod-name-as-host": {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": "tf"},
        "spec": {
            "tfReplicaSpecs": {
                "Worker": {
                    "replicas": 3,
                    "template": {
                        "spec": {
                            "containers": [
                                {
                                    "name": "tensorflow",
                                    "image": "tf:2",
                                    "command": ["python", "t.py", "--host", "$(POD_NAME)"],
                                    "env": [_field("POD_NAME", "metadata.name")],
                                }
                            ]
                        }
                    },
                }
            }
        },
    },
}
CASES["pytorch-workers-only-generated-cpu"]["spec"]["pytorchReplicaSpecs"]["Worker"]["restartPolicy"] = "Never"
# Master and Worker as one template, but the Master's `pytorch-master-0` named in the Workers'
# args: host names are rewritten to JobSet's.
CASES["pytorch-same-template"]["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0] = {
    **TORCH,
    "command": ["python", "train.py"],
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_pod_of_these_jobs_sees_what_v1_gave_it(case: str, tmp_path: Path) -> None:
    path = tmp_path / f"{case}.yaml"
    path.write_text(yaml.safe_dump(CASES[case]))
    assert check(path) >= 2


def test_master_and_worker_templates_that_differ_keep_distinct_ranks(tmp_path: Path) -> None:
    """The issue's case: v1 ranks are Master 0, Worker k -> k + 1, WORLD_SIZE = pods x nproc,
    and no two pods share a rank (pytorch envvar.go setPodEnv)."""
    path = tmp_path / "pt.yaml"
    path.write_text(yaml.safe_dump(CASES["pytorch-master-differs"]))
    request = RenderRequest(file=str(path))
    outcome = render_request(request, RuntimeRegistry())
    jobset = next(o for o in outcome.result.objects if o["kind"] == "JobSet")
    ranks = []
    for pod in jobset_pods(jobset):
        env = seen(pod).env
        ranks.append((pod.rjob, int(env["RANK"]), env["PET_NODE_RANK"], env["WORLD_SIZE"], env["MASTER_ADDR"]))
    assert sorted(ranks, key=lambda r: r[1]) == [
        ("master", 0, "0", "8", "pt-master-0-0.pt"),
        ("node", 1, "1", "8", "pt-master-0-0.pt"),
        ("node", 2, "2", "8", "pt-master-0-0.pt"),
        ("node", 3, "3", "8", "pt-master-0-0.pt"),
    ]
