"""What the Training Operator v1 controllers gave each pod of a job: its main container's env and
the program it ran. A transcription of the v1 Go code, written apart from ktrain:

- defaults (the API server's defaulting webhook, `pkg/apis/kubeflow.org/v1/*_defaults.go`):
  replicas 1, the framework port added when missing, PyTorch nprocPerNode "auto";
  mpi-operator v2beta1 `SetDefaults_MPIJob`: slotsPerWorker 1, OpenMPI;
- PyTorch: `pkg/controller.v1/pytorch/envvar.go` setPodEnv (v1.7+: PYTHONUNBUFFERED "1",
  WORLD_SIZE = replicas x nprocPerNode, PET_NODE_RANK, PET_NNODES; v1.8+, #1948: PET_NPROC_PER_NODE on
  every pod, with or without a Master) with
  `master.go` MasterEnvVarGenerator (MASTER_* and PET_MASTER_*) and `elastic.go`
  ElasticEnvVarGenerator;
- XGBoost: `xgboost/xgboost.go` SetPodEnv (worker rank = index + Master replicas; v1.7+:
  PYTHONUNBUFFERED "1", kubeflow/training-operator#1860, as PaddlePaddle's);
- JAX: `jax/envvar.go` setPodEnv;
- TensorFlow: `tensorflow/tensorflow.go` genTFConfigJSONStr and `tfjob_controller.go`
  SetClusterSpec (only on the `tensorflow` container, only when the job has more than one pod);
- PaddlePaddle: `paddlepaddle/envvar.go` setPodEnv;
- MXNet: `mxnet/mxjob_controller.go` SetClusterSpec and `mxnet.go` genMXConfig;
- MPIJob kubeflow.org/v1: `mpi/mpijob_controller.go` newLauncher (OMPI_MCA_* for kubectl exec,
  NVIDIA_* blanked unless the launcher asks for GPUs) and newWorker (`sleep 365d` without a command);
- MPIJob kubeflow.org/v2beta1: kubeflow/mpi-operator `pkg/controller/mpi_job_controller.go`
  newLauncherPodTemplate (launcherEnvVars, ompiEnvVars + OMPI_MCA_orte_set_default_slots,
  intelEnvVars + I_MPI_PERHOST, mpichEnvVars, nvidiaDisableEnvVars unless runLauncherAsWorker) and
  newWorker (workerEnvVars; `/usr/sbin/sshd -De` without command and args).

Every controller appends its variables after the user's, so they win (the kubelet keeps the last
of two same-named variables). Host names are asked of `host(rt, i)` (v1: one Service per pod,
`<job>-<rt>-<i>`; TF adds `.<namespace>.svc`): the caller answers with the name of the pod that
plays that replica under JobSet, so both sides can be compared directly.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

Obj = dict[str, Any]
Host = Callable[[str, int], str]

REPLICA_KEY = {
    "PyTorchJob": "pytorchReplicaSpecs",
    "TFJob": "tfReplicaSpecs",
    "XGBoostJob": "xgbReplicaSpecs",
    "JAXJob": "jaxReplicaSpecs",
    "PaddleJob": "paddleReplicaSpecs",
    "MXJob": "mxReplicaSpecs",
    "MPIJob": "mpiReplicaSpecs",
}
# (default container name, port name, default port): pkg/apis/kubeflow.org/v1 *_types.go
FRAMEWORK = {
    "PyTorchJob": ("pytorch", "pytorchjob-port", 23456),
    "TFJob": ("tensorflow", "tfjob-port", 2222),
    "XGBoostJob": ("xgboost", "xgboostjob-port", 9999),
    "JAXJob": ("jax", "jaxjob-port", 6666),
    "PaddleJob": ("paddle", "master", 36543),
    "MXJob": ("mxnet", "mxjob-port", 9091),
    "MPIJob": ("mpi", None, None),
}


@dataclass
class V1Pod:
    rtype: str  # the v1 replica type, e.g. "Worker"
    index: int
    env: dict[str, str]  # the main container's env: the user's, then the controller's
    controller: set[str] = field(default_factory=set)  # what the controller set
    program: list[str] = field(default_factory=list)  # command + args
    entrypoint: bool = False  # no command: the image's entrypoint runs `program` as its args


def go_json(value: object) -> str:
    return json.dumps(value, separators=(",", ":"))


class Job:
    def __init__(self, job: Obj) -> None:
        self.data = job
        self.kind = job["kind"]
        self.api = job["apiVersion"]
        self.name = job["metadata"]["name"]
        self.spec = job["spec"]
        self.specs: dict[str, Obj] = self.spec[REPLICA_KEY[self.kind]]

    def replicas(self, rtype: str) -> int:
        spec = self.specs.get(rtype)
        if spec is None:
            return 0
        n = spec.get("replicas")
        return 1 if n is None else int(n)

    @property
    def total(self) -> int:
        return sum(self.replicas(t) for t in self.specs)

    def main(self, rtype: str) -> Obj:
        containers = self.specs[rtype]["template"]["spec"]["containers"]
        if self.kind == "MPIJob":
            wanted = self.spec.get("mainContainer") if self.api == "kubeflow.org/v1" else None
            return next((c for c in containers if c.get("name") == wanted), containers[0])
        default = FRAMEWORK[self.kind][0]
        return next((c for c in containers if c.get("name") == default), containers[0])

    def port(self, rtype: str) -> int:
        """getPortFrom<Kind>Job, after setDefaultPort added the default when missing."""
        _, port_name, default = FRAMEWORK[self.kind]
        for port in self.main(rtype).get("ports") or []:
            if port.get("name") == port_name:
                return int(port["containerPort"])
        return int(default or 0)


def user_env(container: Obj) -> dict[str, str]:
    return {e["name"]: str(e.get("value", "")) for e in container.get("env") or [] if "valueFrom" not in e}


def program_of(container: Obj) -> tuple[list[str], bool]:
    command = [str(x) for x in container.get("command") or []]
    args = [str(x) for x in container.get("args") or []]
    return [*command, *args], not command


def v1_pods(job_data: Obj, host: Host, pod_ip: Host) -> list[V1Pod]:
    job = Job(job_data)
    out = []
    for rtype in job.specs:
        for index in range(job.replicas(rtype)):
            main = job.main(rtype)
            env = user_env(main)
            ctrl = controller_env(job, rtype, index, host, pod_ip)
            env.update(ctrl)
            program, entry = program_of(main)
            program, entry = mpi_program(job, rtype, main, program, entry)
            out.append(V1Pod(rtype, index, env, set(ctrl), program, entry))
    return out


def controller_env(job: Job, rtype: str, index: int, host: Host, pod_ip: Host) -> dict[str, str]:
    rt = rtype.lower()
    kind = job.kind
    if kind == "PyTorchJob":
        return pytorch_env(job, rt, index, host)
    if kind == "XGBoostJob":
        return xgboost_env(job, rt, index, host)
    if kind == "JAXJob":
        total = job.total
        return {
            "PYTHONUNBUFFERED": "1",
            "COORDINATOR_PORT": str(job.port("Worker")),
            "COORDINATOR_ADDRESS": host("worker", 0),
            "NUM_PROCESSES": str(total),
            "PROCESS_ID": str(index),
        }
    if kind == "TFJob":
        if job.main(rtype).get("name") != "tensorflow":
            return {}
        value = tf_config(job, rt, index, host)
        return {} if value is None else {"TF_CONFIG": value}
    if kind == "PaddleJob":
        return paddle_env(job, rt, index, host, pod_ip)
    if kind == "MXJob":
        return mxnet_env(job, rt, index, host)
    return mpi_env(job, rtype)


def pytorch_env(job: Job, rt: str, index: int, host: Host) -> dict[str, str]:
    env: dict[str, str] = {"PYTHONUNBUFFERED": "1"}
    total = job.total
    elastic = job.spec.get("elasticPolicy")
    # pytorch_defaults.go setDefaultNprocPerNode: "auto" unless elasticPolicy.nProcPerNode is set.
    given = job.spec.get("nprocPerNode")
    if given is None and (elastic is None or elastic.get("nProcPerNode") is None):
        given = "auto"
    nproc = None if given is None else str(given)
    per_node = int(nproc) if nproc is not None and nproc.isdigit() else 1
    if "Master" in job.specs:
        port = str(job.port("Master"))
        env |= {
            "MASTER_PORT": port,
            "MASTER_ADDR": host("master", 0),
            "PET_MASTER_PORT": port,
            "PET_MASTER_ADDR": host("master", 0),
        }
        rank = index + 1 if rt == "worker" else index
        env |= {
            "WORLD_SIZE": str(total * per_node),
            "RANK": str(rank),
            "PET_NODE_RANK": str(rank),
        }
    if nproc is not None:  # v1.8+ (#1948): every pod, Master or not
        env["PET_NPROC_PER_NODE"] = nproc
    if elastic is None:
        env["PET_NNODES"] = str(total)
        return env
    rdzv_host = elastic.get("rdzvHost") or host("worker", 0)
    rdzv_port = elastic.get("rdzvPort") or job.port("Worker")
    env["PET_RDZV_ENDPOINT"] = f"{rdzv_host}:{rdzv_port}"
    env["PET_RDZV_BACKEND"] = elastic.get("rdzvBackend") or "c10d"
    low, high = elastic.get("minReplicas"), elastic.get("maxReplicas")
    if low is None and high is None:  # setPytorchElasticPolicy
        low = high = job.replicas("Worker")
    low = high if low is None else low
    high = low if high is None else high
    env["PET_NNODES"] = f"{low}:{high}"
    if elastic.get("maxRestarts") is not None:
        env["PET_MAX_RESTARTS"] = str(elastic["maxRestarts"])
    if elastic.get("nProcPerNode") is not None:
        env["PET_NPROC_PER_NODE"] = str(elastic["nProcPerNode"])
    if elastic.get("rdzvId") is not None:
        env["PET_RDZV_ID"] = elastic["rdzvId"]
    if elastic.get("rdzvConf"):
        env["PET_RDZV_CONF"] = ",".join(f"{c['key']}={c['value']}" for c in elastic["rdzvConf"])
    if elastic.get("standalone"):
        env["PET_STANDALONE"] = ""
    return env


def xgboost_env(job: Job, rt: str, index: int, host: Host) -> dict[str, str]:
    rank = index + (job.replicas("Master") if rt == "worker" else 0)
    total = job.total
    env = {
        "MASTER_PORT": str(job.port("Master")),
        "MASTER_ADDR": host("master", 0),
        "WORLD_SIZE": str(total),
        "RANK": str(rank),
        "PYTHONUNBUFFERED": "1",  # "0" before v1.7 (kubeflow/training-operator#1860)
    }
    if total > 1:
        env["WORKER_PORT"] = str(job.port("Worker"))
        env["WORKER_ADDRS"] = ",".join(host("worker", i) for i in range(total - 1))
    return env


def tf_config(job: Job, rt: str, index: int, host: Host) -> str | None:
    if job.total == 1:  # isDistributed
        return None
    cluster: dict[str, list[str]] = {}
    for rtype in sorted(job.specs, key=str.lower):  # a Go map: encoding/json sorts the keys
        r = rtype.lower()
        if r == "evaluator":
            continue
        cluster[r] = [f"{host(r, i)}:{job.port(rtype)}" for i in range(job.replicas(rtype))]
    task = {"type": rt, "index": index}
    if job.spec.get("enableDynamicWorker"):
        worker: Obj = {}
        ps: list[str] = []
        if rt == "ps":
            ps = [cluster["ps"][index]]
        elif rt == "worker":
            ps = cluster.get("ps", [])
            worker = {str(index): cluster["worker"][index]}
        return go_json({"sparseCluster": {"worker": worker, "ps": ps}, "task": task})
    return go_json({"cluster": cluster, "task": task, "environment": "cloud"})


def paddle_env(job: Job, rt: str, rank: int, host: Host, pod_ip: Host) -> dict[str, str]:
    env = {"PYTHONUNBUFFERED": "1", "PADDLE_JOB_ID": job.name, "PADDLE_NNODES": str(job.total)}
    if "Master" not in job.specs:
        port = job.port("Worker")
        if rank == 0:
            env["POD_IP_DUMMY"] = pod_ip(rt, rank)
            env["PADDLE_MASTER"] = f"{pod_ip(rt, rank)}:{port}"
        else:
            env["PADDLE_MASTER"] = f"{host('worker', 0)}:{port}"
        return env
    port = job.port("Master")
    if rank == 0 and rt == "master":
        env["POD_IP_DUMMY"] = pod_ip(rt, rank)
        env["PADDLE_MASTER"] = f"{pod_ip(rt, rank)}:{port}"
    else:
        env["PADDLE_MASTER"] = f"{host('master', 0)}:{port}"
    env["PADDLE_SERVER_NUM" if rt == "master" else "PADDLE_TRAINER_NUM"] = "1"
    return env


def mxnet_env(job: Job, rt: str, index: int, host: Host) -> dict[str, str]:
    types = sorted(job.specs, key=str.lower)
    cluster = {
        t.lower(): [{"url": host(t.lower(), i), "port": job.port(t)} for i in range(job.replicas(t))] for t in types
    }
    labels = {
        t.lower(): ((job.specs[t]["template"].get("metadata") or {}).get("annotations") or {}).get(
            "tuner-server-key", ""
        )
        for t in types
    }
    config = {"cluster": cluster, "labels": labels, "task": {"type": rt, "index": index}}
    sched = cluster.get("scheduler") or []
    env = {
        "MX_CONFIG": go_json(config),
        "DMLC_PS_ROOT_PORT": str(sched[0]["port"] if sched else 0),
        "DMLC_PS_ROOT_URI": str(sched[0]["url"]) if sched else "",
        "DMLC_NUM_SERVER": str(len(cluster.get("server", []))),
        "DMLC_NUM_WORKER": str(len(cluster.get("worker", []))),
        "DMLC_ROLE": rt,
        "DMLC_USE_KUBERNETES": "1",
    }
    if rt == "worker":
        env["DMLC_WORKER_ID"] = str(index)
    return env


def mpi_env(job: Job, rtype: str) -> dict[str, str]:
    nvidia_off = {"NVIDIA_VISIBLE_DEVICES": "", "NVIDIA_DRIVER_CAPABILITIES": ""}
    if job.api == "kubeflow.org/v1":
        if rtype != "Launcher":
            return {}
        env = {
            "OMPI_MCA_plm_rsh_agent": "/etc/mpi/kubexec.sh",
            "OMPI_MCA_orte_default_hostfile": "/etc/mpi/hostfile",
        }
        gpu = any(
            "nvidia.com/gpu" in ((c.get("resources") or {}).get("limits") or {})
            for c in job.specs["Launcher"]["template"]["spec"]["containers"]
        )
        return env if gpu else env | nvidia_off
    if rtype != "Launcher":
        return {"K_MPI_JOB_ROLE": "worker"}
    slots = str(job.spec.get("slotsPerWorker", 1))
    impl = job.spec.get("mpiImplementation") or "OpenMPI"
    env = {"K_MPI_JOB_ROLE": "launcher"}
    if impl == "OpenMPI":
        env |= {
            "OMPI_MCA_orte_keep_fqdn_hostnames": "true",
            "OMPI_MCA_orte_default_hostfile": "/etc/mpi/hostfile",
            "OMPI_MCA_plm_rsh_args": "-o ConnectionAttempts=10",
            "OMPI_MCA_orte_set_default_slots": slots,
        }
    elif impl == "Intel":
        env |= {
            "I_MPI_HYDRA_HOST_FILE": "/etc/mpi/hostfile",
            "I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS": "-o ConnectionAttempts=10",
            "I_MPI_PERHOST": slots,
        }
    else:
        env |= {"HYDRA_HOST_FILE": "/etc/mpi/hostfile", "HYDRA_LAUNCH_EXTRA_ARGS": "-o ConnectionAttempts=10"}
    if not job.spec.get("runLauncherAsWorker"):
        env |= nvidia_off
    return env


def mpi_program(job: Job, rtype: str, main: Obj, program: list[str], entry: bool) -> tuple[list[str], bool]:
    if job.kind != "MPIJob" or rtype != "Worker":
        return program, entry
    if job.api == "kubeflow.org/v1":
        if not main.get("command"):
            return ["sleep", "365d"], False
        return program, entry
    if not main.get("command") and not main.get("args"):
        return ["/usr/sbin/sshd", "-De"], False
    return program, entry
