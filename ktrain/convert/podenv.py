"""The environment v1 operators computed per pod for TensorFlow, PaddlePaddle and MXNet,
computed inside the pod instead, from what JobSet gives every pod.

Trainer v2 has no ML policy for these frameworks, and a runtime may only use fields its CRD
allows. So the runtime's framework container (`node`) starts a small POSIX shell wrapper
(`command: [/bin/sh, -c, SCRIPT, ktrain-env]`) that exports the v1 variables, then `exec`s the
program given as the container's `args`. Its inputs are plain env vars of the template:

- `KTRAIN_JOBSET`, `KTRAIN_RJOB`: the JobSet and replicated-job names (pod labels, downward API);
- `KTRAIN_POD_INDEX`: the Job completion index (pod annotation, downward API);
- `KTRAIN_POD_IP`: the pod IP (PaddlePaddle's rank-0 master address);
- `KTRAIN_ROLES`: `rjob:role:count:port ...`, one entry per v1 replica type, sorted by role name
  (Go's encoding/json sorts map keys, so the JSON comes out in the same order as v1's). A count
  of `*` is the trainer step's node count, `$PET_NNODES` (the bundled runtimes use the `torch`
  policy only to carry that count, so it follows `--nodes`; other steps get it through the
  policy's envInjection).

Pod host names are JobSet's stable names `<jobset>-<rjob>-0-<index>.<jobset>` (each rJob has one
Job; the subdomain is the JobSet name), where v1 used one Service per pod
(`<job>-<role>-<index>[.<ns>.svc]`). Everything else is what the v1 controllers compute:
TensorFlow `tensorflow.go` genTFConfigJSONStr / genClusterSpec and `tfjob_controller.go`
isDistributed; PaddlePaddle `paddlepaddle/envvar.go` setPodEnv; MXNet `mxnet/mxjob_controller.go`
SetClusterSpec with `mxnet.go` genMXConfig.
"""

from __future__ import annotations

import json

from ktrain import constants as c
from ktrain.util.jsondata import Obj

# Shared shell: parse one KTRAIN_ROLES entry into rj/role/n/port, and list a role's hosts.
_COMMON = r"""ktrain_role() {
  rj=${1%%:*}; t=${1#*:}; role=${t%%:*}; t=${t#*:}; n=${t%%:*}; port=${t#*:}
  if [ "$n" = "*" ]; then n=${PET_NNODES:-1}; fi
}
ktrain_host() { printf '%s' "$KTRAIN_JOBSET-$1-0-$2.$KTRAIN_JOBSET"; }
"""

TF_SCRIPT = (
    _COMMON
    + r"""total=0; cluster=""; ps=""; me=""
for s in $KTRAIN_ROLES; do
  ktrain_role "$s"
  total=$((total + n))
  if [ "$rj" = "$KTRAIN_RJOB" ]; then me=$role; myport=$port; fi
  if [ "$role" = evaluator ]; then continue; fi
  hosts=""; i=0
  while [ "$i" -lt "$n" ]; do
    hosts="$hosts${hosts:+,}\"$(ktrain_host "$rj" "$i"):$port\""; i=$((i + 1))
  done
  if [ "$role" = ps ]; then ps=$hosts; fi
  cluster="$cluster${cluster:+,}\"$role\":[$hosts]"
done
if [ "$total" -ne 1 ]; then
  task="\"task\":{\"type\":\"$me\",\"index\":$KTRAIN_POD_INDEX}"
  if [ "${KTRAIN_TF_SPARSE:-}" = 1 ]; then
    self="\"$(ktrain_host "$KTRAIN_RJOB" "$KTRAIN_POD_INDEX"):$myport\""
    case $me in
      ps) sparse="\"worker\":{},\"ps\":[$self]" ;;
      worker) sparse="\"worker\":{\"$KTRAIN_POD_INDEX\":$self},\"ps\":[$ps]" ;;
      *) sparse="\"worker\":{},\"ps\":[]" ;;
    esac
    TF_CONFIG="{\"sparseCluster\":{$sparse},$task}"
  else
    TF_CONFIG="{\"cluster\":{$cluster},$task,\"environment\":\"cloud\"}"
  fi
  export TF_CONFIG
fi
exec "$@"
"""
)

PADDLE_SCRIPT = (
    _COMMON
    + r"""total=0; master_rj=""; worker_rj=""; me=""
for s in $KTRAIN_ROLES; do
  ktrain_role "$s"
  total=$((total + n))
  if [ "$role" = master ]; then master_rj=$rj; master_port=$port; fi
  if [ "$role" = worker ]; then worker_rj=$rj; worker_port=$port; fi
  if [ "$rj" = "$KTRAIN_RJOB" ]; then me=$role; fi
done
export PYTHONUNBUFFERED="${PYTHONUNBUFFERED-1}" PADDLE_JOB_ID="$KTRAIN_JOBSET" PADDLE_NNODES="$total"
if [ -z "$master_rj" ]; then
  if [ "$KTRAIN_POD_INDEX" -eq 0 ]; then
    export POD_IP_DUMMY="$KTRAIN_POD_IP" PADDLE_MASTER="$KTRAIN_POD_IP:$worker_port"
  else
    export PADDLE_MASTER="$(ktrain_host "$worker_rj" 0):$worker_port"
  fi
else
  if [ "$KTRAIN_POD_INDEX" -eq 0 ] && [ "$me" = master ]; then
    export POD_IP_DUMMY="$KTRAIN_POD_IP" PADDLE_MASTER="$KTRAIN_POD_IP:$master_port"
  else
    export PADDLE_MASTER="$(ktrain_host "$master_rj" 0):$master_port"
  fi
  if [ "$me" = master ]; then export PADDLE_SERVER_NUM=1; else export PADDLE_TRAINER_NUM=1; fi
fi
exec "$@"
"""
)

MXNET_SCRIPT = (
    _COMMON
    + r"""cluster=""; labels=""; me=""; root_uri=""; root_port=0; nserver=0; nworker=0
for s in $KTRAIN_ROLES; do
  ktrain_role "$s"
  hosts=""; i=0
  while [ "$i" -lt "$n" ]; do
    hosts="$hosts${hosts:+,}{\"url\":\"$(ktrain_host "$rj" "$i")\",\"port\":$port}"; i=$((i + 1))
  done
  cluster="$cluster${cluster:+,}\"$role\":[$hosts]"
  eval "tuner=\${KTRAIN_MX_LABEL_$role:-}"
  labels="$labels${labels:+,}\"$role\":\"$tuner\""
  if [ "$rj" = "$KTRAIN_RJOB" ]; then me=$role; fi
  case $role in
    scheduler) if [ "$n" -gt 0 ]; then root_uri=$(ktrain_host "$rj" 0); root_port=$port; fi ;;
    server) nserver=$n ;;
    worker) nworker=$n ;;
  esac
done
MX_CONFIG="{\"cluster\":{$cluster},\"labels\":{$labels},\"task\":{\"type\":\"$me\",\"index\":$KTRAIN_POD_INDEX}}"
export MX_CONFIG DMLC_PS_ROOT_PORT="$root_port" DMLC_PS_ROOT_URI="$root_uri" DMLC_NUM_SERVER="$nserver"
export DMLC_NUM_WORKER="$nworker" DMLC_ROLE="$me" DMLC_USE_KUBERNETES=1
if [ "$me" = worker ]; then export DMLC_WORKER_ID="$KTRAIN_POD_INDEX"; fi
exec "$@"
"""
)

SCRIPTS = {"tensorflow": TF_SCRIPT, "paddle": PADDLE_SCRIPT, "mxnet": MXNET_SCRIPT}
WRAPPER_ARG0 = "ktrain-env"


def wrapper_command(framework: str) -> list[str]:
    return ["/bin/sh", "-c", SCRIPTS[framework], WRAPPER_ARG0]


def _field(name: str, path: str) -> Obj:
    return {"name": name, "valueFrom": {"fieldRef": {"fieldPath": path}}}


def roles_value(roles: list[tuple[str, str, str, int]]) -> str:
    """KTRAIN_ROLES for (rjob, role, count-or-*, port) entries, sorted by role name."""
    return " ".join(f"{rj}:{role}:{n}:{port}" for rj, role, n, port in sorted(roles, key=lambda r: r[1]))


def wrapper_env(roles: str, extra: list[Obj] | None = None) -> list[Obj]:
    """The env the wrapper reads (downward API and the role table)."""
    return [
        _field("KTRAIN_JOBSET", f"metadata.labels['{c.JOBSET_NAME_LABEL}']"),
        _field("KTRAIN_RJOB", f"metadata.labels['{c.JOBSET_RJOB_NAME_LABEL}']"),
        _field("KTRAIN_POD_INDEX", c.COMPLETION_INDEX_FIELD_PATH),
        _field("KTRAIN_POD_IP", "status.podIP"),
        {"name": "KTRAIN_ROLES", "value": roles},
        *(extra or []),
    ]


def is_wrapper(command: object) -> bool:
    return isinstance(command, list) and len(command) == 4 and command[3] == WRAPPER_ARG0


# The bundled runtimes: (framework, image, [(rjob, role, count, container)]), ports are v1's defaults.
BUNDLED = {
    "tensorflow": ("tensorflow-distributed", "tensorflow/tensorflow:2.16.1", 2222, [(c.NODE, "worker", "*")]),
    "paddle": ("paddle-distributed", "paddlepaddle/paddle:2.6.1", 36543, [(c.NODE, "worker", "*")]),
    "mxnet": (
        "mxnet-distributed",
        "mxnet/python:1.9.1_native_py3",
        9091,
        [("scheduler", "scheduler", "1"), ("server", "server", "1"), (c.NODE, "worker", "*")],
    ),
}
PORT_NAMES = {"tensorflow": "tfjob-port", "paddle": "master", "mxnet": "mxjob-port"}


def bundled_runtime(framework: str) -> Obj:
    """The bundled runtime for a framework, as runtimes/<name>.yaml holds it (a test keeps the
    file and this in sync)."""
    name, image, port, steps = BUNDLED[framework]
    roles = roles_value([(rj, role, n, port) for rj, role, n in steps])
    rjobs = []
    targets = []
    for rj, _role, n in steps:
        container_name = c.NODE if rj == c.NODE else framework
        container = {
            "name": container_name,
            "image": image,
            "command": wrapper_command(framework),
            "env": wrapper_env(roles),
            "ports": [{"containerPort": port, "name": PORT_NAMES[framework]}],
        }
        if rj != c.NODE and framework == "mxnet":
            # With DMLC_ROLE scheduler/server, importing mxnet runs the parameter server.
            container["args"] = ["python", "-c", "import mxnet"]
        job: Obj = {"template": {"spec": {"containers": [container]}}}
        rjob: Obj = {"name": rj, "template": {"spec": job}}
        if rj == c.NODE:
            rjob["template"] = {"metadata": {"labels": {c.LABEL_ANCESTOR: c.ANCESTOR_TRAINER}}, "spec": job}
        else:
            job["parallelism"] = int(n)
            job["completions"] = int(n)
            targets.append({"jobName": rj, "containerNames": [container_name]})
        rjobs.append(rjob)
    torch: Obj = {"envInjection": {"targets": targets}} if targets else {}
    js: Obj = {"replicatedJobs": rjobs}
    if len(rjobs) > 1:
        js["successPolicy"] = {"operator": "All", "targetReplicatedJobs": [c.NODE]}
    return {
        "apiVersion": c.TRAINER_API_VERSION,
        "kind": c.CLUSTER_TRAINING_RUNTIME_KIND,
        "metadata": {
            "name": name,
            "labels": {c.LABEL_FRAMEWORK: framework, c.LABEL_WEBHOOK_VALIDATION: c.WEBHOOK_VALIDATION_DISABLED},
        },
        "spec": {"mlPolicy": {"numNodes": 1, "torch": torch}, "template": {"spec": js}},
    }


# --------------------------------------------------------------------------- fixed counts: plain env
#
# When every count is fixed (a runtime generated for one v1 job), the per-pod values differ only by
# the JobSet name and the pod's index, which the kubelet substitutes into later env values
# (`$(VAR)` references to earlier variables). Then no wrapper is needed, and a container that runs
# its image's entrypoint (no command) keeps doing so.

JOBSET_REF = "$(KTRAIN_JOBSET)"
INDEX_REF = "$(KTRAIN_POD_INDEX)"


def reference_env() -> list[Obj]:
    return [
        _field("KTRAIN_JOBSET", f"metadata.labels['{c.JOBSET_NAME_LABEL}']"),
        _field("KTRAIN_POD_INDEX", c.COMPLETION_INDEX_FIELD_PATH),
    ]


def _ref_host(rjob: str, index: int | str) -> str:
    return f"{JOBSET_REF}-{rjob}-0-{index}.{JOBSET_REF}"


def _json(value: object) -> str:
    return json.dumps(value, separators=(",", ":"))


def tf_static_env(roles: list[tuple[str, str, int, int]], rjob: str, sparse: bool = False) -> list[Obj]:
    """TF_CONFIG for the pods of `rjob` (genTFConfigJSONStr), roles = (rjob, role, count, port)."""
    if sum(n for _, _, n, _ in roles) == 1:  # isDistributed
        return []
    me = next(r for r in roles if r[0] == rjob)
    cluster = {
        role: [f"{_ref_host(rj, i)}:{port}" for i in range(n)]
        for rj, role, n, port in sorted(roles, key=lambda r: r[1])
        if role != "evaluator"
    }
    task = f'"task":{{"type":{_json(me[1])},"index":{INDEX_REF}}}'
    if sparse:
        self_host = _json(f"{_ref_host(rjob, INDEX_REF)}:{me[3]}")
        if me[1] == "ps":
            inner = f'"worker":{{}},"ps":[{self_host}]'
        elif me[1] == "worker":
            inner = f'"worker":{{"{INDEX_REF}":{self_host}}},"ps":{_json(cluster.get("ps", []))}'
        else:
            inner = '"worker":{},"ps":[]'
        value = f'{{"sparseCluster":{{{inner}}},{task}}}'
    else:
        value = f'{{"cluster":{_json(cluster)},{task},"environment":"cloud"}}'
    return [{"name": "TF_CONFIG", "value": value}]


def mxnet_static_env(roles: list[tuple[str, str, int, int]], rjob: str, labels: dict[str, str]) -> list[Obj]:
    """MX_CONFIG and DMLC_* for the pods of `rjob` (SetClusterSpec / genMXConfig)."""
    ordered = sorted(roles, key=lambda r: r[1])
    me = next(r for r in roles if r[0] == rjob)
    cluster = {role: [{"url": _ref_host(rj, i), "port": port} for i in range(n)] for rj, role, n, port in ordered}
    label_map = {role: labels.get(role, "") for _, role, _, _ in ordered}
    task = f'{{"type":{_json(me[1])},"index":{INDEX_REF}}}'
    config = f'{{"cluster":{_json(cluster)},"labels":{_json(label_map)},"task":{task}}}'
    sched = cluster.get("scheduler") or []
    env: list[Obj] = [
        {"name": "MX_CONFIG", "value": config},
        {"name": "DMLC_PS_ROOT_PORT", "value": str(sched[0]["port"] if sched else 0)},
        {"name": "DMLC_PS_ROOT_URI", "value": sched[0]["url"] if sched else ""},
        {"name": "DMLC_NUM_SERVER", "value": str(len(cluster.get("server", [])))},
        {"name": "DMLC_NUM_WORKER", "value": str(len(cluster.get("worker", [])))},
        {"name": "DMLC_ROLE", "value": me[1]},
        {"name": "DMLC_USE_KUBERNETES", "value": "1"},
    ]
    if me[1] == "worker":
        env.append({"name": "DMLC_WORKER_ID", "value": INDEX_REF})
    return env


def paddle_static_env(roles: list[tuple[str, str, int, int]], rjob: str) -> list[Obj]:
    """setPodEnv without the rank-0 special case (every pod names the master by its host name,
    where v1 gave rank 0 its own pod IP): used only when the container runs its image's
    entrypoint, so the wrapper cannot run first."""
    me = next(r for r in roles if r[0] == rjob)
    by_role = {role: (rj, port) for rj, role, _, port in roles}
    env = [
        {"name": "PYTHONUNBUFFERED", "value": "1"},
        {"name": "PADDLE_JOB_ID", "value": JOBSET_REF},
        {"name": "PADDLE_NNODES", "value": str(sum(n for _, _, n, _ in roles))},
    ]
    first = "master" if "master" in by_role else "worker"
    rj, port = by_role[first]
    env.append({"name": "PADDLE_MASTER", "value": f"{_ref_host(rj, 0)}:{port}"})
    if "master" in by_role:
        env.append({"name": "PADDLE_SERVER_NUM" if me[1] == "master" else "PADDLE_TRAINER_NUM", "value": "1"})
    return env
