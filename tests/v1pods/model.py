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

Beyond the env:

- pod labels (`v1_labels`): training-operator `common/pod.go` createNewPod with GenLabels
  (operator-name, job-name, replica-type, replica-index, job-role `master` per IsMasterRole);
  mpi-operator v2beta1 defaultLabels (operator-name `mpi-operator`, job-name, job-role
  launcher/worker) and newWorker (replica-index on workers);
- pod names and the names that resolve (`v1_pod_name`, `v1_resolvable`): training-operator's
  per-pod Services (`common/service.go` CreateNewService, one per pod, named as the pod);
  mpi-operator's worker hostname `<job>-worker-<i>` under the headless Service `<job>-worker`;
- the user's downward-API env (`fieldRef` to those labels, `metadata.name`) and the kubelet's
  `$(VAR)` expansion in command and args;
- mpi-operator v2beta1's launcher Job and worker pods (`mpi_launcher_job`, `mpi_worker_pod`):
  newLauncherJob (backoffLimit, activeDeadlineSeconds, ttlSecondsAfterFinished from runPolicy as
  written; a Job's own default backoffLimit 6 when unset), setRestartPolicy (ExitCode -> Never), and
  workers as plain pods that nothing re-creates or counts.

Every controller appends its variables after the user's, so they win (the kubelet keeps the last
of two same-named variables). Host names are asked of `host(rt, i)` (v1: one Service per pod,
`<job>-<rt>-<i>`; TF adds `.<namespace>.svc`): the caller answers with the name of the pod that
plays that replica under JobSet, so both sides can be compared directly.
"""

from __future__ import annotations

import json
import re
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


OPERATOR_NAMES = {
    "PyTorchJob": "pytorchjob-controller",
    "TFJob": "tfjob-controller",
    "XGBoostJob": "xgboostjob-controller",
    "PaddleJob": "paddlejob-controller",
    "JAXJob": "jaxjob-controller",
    "MXJob": "mxjob-controller",
    "MPIJob": "mpijob-controller",
}


def is_master_role(kind: str, rtype: str, index: int) -> bool:
    """Each reconciler's IsMasterRole (pytorch, xgboost, paddle: Master; tensorflow: Chief or
    Master; mxnet: Server; jax: index 0; mpi: Launcher)."""
    if kind == "JAXJob":
        return index == 0
    masters = {"TFJob": ("Chief", "Master"), "MXJob": ("Server",), "MPIJob": ("Launcher",)}
    return rtype in masters.get(kind, ("Master",))


def v1_labels(job: Job, rtype: str, index: int) -> dict[str, str]:
    p = "training.kubeflow.org/"
    if job.kind == "MPIJob" and job.api != "kubeflow.org/v1":
        labels = {p + "operator-name": "mpi-operator", p + "job-name": job.name, p + "job-role": rtype.lower()}
        if rtype == "Worker":
            labels[p + "replica-index"] = str(index)
        return labels
    labels = {
        p + "operator-name": OPERATOR_NAMES[job.kind],
        p + "job-name": job.name,
        p + "replica-type": rtype.lower(),
        p + "replica-index": str(index),
    }
    if is_master_role(job.kind, rtype, index):
        labels[p + "job-role"] = "master"
    return labels


def v1_pod_name(job: Job, rtype: str, index: int) -> str:
    """The pod's name (training-operator's replicaName / mpi-operator's workerName, the launcher a
    Job's pod)."""
    if job.kind == "MPIJob" and rtype == "Launcher":
        return f"{job.name}-launcher-xxxxx"
    return f"{job.name}-{rtype.lower()}-{index}"


def v1_resolvable(job: Job) -> set[str]:
    """The pod host names that resolved in v1: a Service per pod (training-operator), the workers'
    hostname.subdomain (mpi-operator v2beta1)."""
    if job.kind == "MPIJob":
        return {f"{job.name}-worker-{i}.{job.name}-worker" for i in range(job.replicas("Worker"))}
    return {v1_pod_name(job, t, i) for t in job.specs for i in range(job.replicas(t))}


def expand(text: str, env: dict[str, str]) -> str:
    """The kubelet's `$(VAR)` expansion (`$$` a literal `$`, an unknown name left as written)."""
    return re.sub(
        r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)",
        lambda m: "$" if m.group(0) == "$$" else env.get(m.group(1), m.group(0)),
        text,
    )


def user_env(container: Obj, fields: dict[str, str] | None = None) -> dict[str, str]:
    """The user's env: plain values (with earlier variables expanded), fieldRefs from `fields`."""
    env: dict[str, str] = {}
    for e in container.get("env") or []:
        source = e.get("valueFrom")
        if source is None:
            env[e["name"]] = expand(str(e.get("value", "")), env)
        elif fields is not None and "fieldRef" in source and source["fieldRef"]["fieldPath"] in fields:
            env[e["name"]] = fields[source["fieldRef"]["fieldPath"]]
    return env


def program_of(container: Obj, env: dict[str, str] | None = None) -> tuple[list[str], bool]:
    command = [expand(str(x), env or {}) for x in container.get("command") or []]
    args = [expand(str(x), env or {}) for x in container.get("args") or []]
    return [*command, *args], not command


def pod_fields(job: Job, rtype: str, index: int) -> dict[str, str]:
    """What the downward API gave a v1 pod: its labels and its name."""
    fields = {f"metadata.labels['{k}']": v for k, v in v1_labels(job, rtype, index).items()}
    fields["metadata.name"] = v1_pod_name(job, rtype, index)
    return fields


def v1_pods(job_data: Obj, host: Host, pod_ip: Host) -> list[V1Pod]:
    job = Job(job_data)
    out = []
    for rtype in job.specs:
        for index in range(job.replicas(rtype)):
            main = job.main(rtype)
            env = user_env(main, pod_fields(job, rtype, index))
            ctrl = controller_env(job, rtype, index, host, pod_ip)
            env.update(ctrl)
            program, entry = program_of(main, env)
            program, entry = mpi_program(job, rtype, main, program, entry)
            out.append(V1Pod(rtype, index, env, set(ctrl), program, entry))
    return out


def mpi_launcher_job(job_data: Obj) -> Obj:
    """mpi-operator v2beta1 newLauncherJob's Job spec fields (None: unset) and its pod's restart policy."""
    job = Job(job_data)
    rp = job.spec.get("runPolicy") or {}
    restart = job.specs["Launcher"].get("restartPolicy") or "OnFailure"  # DefaultLauncherRestartPolicy
    return {
        "backoffLimit": rp.get("backoffLimit", 6),  # unset: batch/v1 Job's default
        "activeDeadlineSeconds": rp.get("activeDeadlineSeconds"),
        "ttlSecondsAfterFinished": rp.get("ttlSecondsAfterFinished"),
        "restartPolicy": "Never" if restart == "ExitCode" else restart,
    }


def mpi_worker_pod(job_data: Obj) -> Obj:
    """A v2beta1 worker pod: restartPolicy (setRestartPolicy; DefaultRestartPolicy Never) and how
    often a failed container is retried (a plain pod: OnFailure without limit, else never)."""
    job = Job(job_data)
    restart = job.specs["Worker"].get("restartPolicy") or "Never"
    restart = "Never" if restart == "ExitCode" else restart
    return {"restartPolicy": restart, "restarts": "unlimited" if restart == "OnFailure" else 0}


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
