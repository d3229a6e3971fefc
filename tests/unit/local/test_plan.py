"""What a local run starts, planned from real renders (ktrain.local.plan; no processes)."""

from __future__ import annotations

import base64
import itertools
import json
from typing import Any

import pytest

import ktrain
from ktrain.errors import UsageError
from ktrain.local.netmap import NETMAP_ENV
from ktrain.local.plan import MPI_SKIP_REASON, PlanOptions, RunPlan, plan_run

RUN = "/tmp/ktrain-run-test"


def _plan(objects: list[dict[str, Any]], policy: str | None = None, **options: Any) -> RunPlan:
    ports = itertools.count(40000)
    opts = PlanOptions(run_dir=RUN, alloc_port=lambda: next(ports), python="/usr/bin/python3", ml_policy=policy)
    for key, value in options.items():
        setattr(opts, key, value)
    return plan_run(objects, opts)


def _words(plan: RunPlan) -> str:
    return json.dumps([[c.argv, c.env] for p in plan.pods() for c in [*p.init, *p.containers]])


def test_torch_pods_get_their_rank_and_a_local_master(tmp_path: Any) -> None:
    objects = ktrain.render(
        runtime="torch-distributed", num_nodes=3, num_proc_per_node=2, name="demo", command=["torchrun", "train.py"]
    )
    plan = _plan(objects, "torch", cpu_count=8)
    pods = plan.pods()
    assert [p.name for p in pods] == ["node-0-0", "node-0-1", "node-0-2"]
    assert [p.hostname for p in pods] == ["demo-node-0-0", "demo-node-0-1", "demo-node-0-2"]
    envs = [p.containers[0].env for p in pods]
    assert [e["PET_NODE_RANK"] for e in envs] == ["0", "1", "2"]
    assert [e["JOB_COMPLETION_INDEX"] for e in envs] == ["0", "1", "2"]
    assert {e["PET_MASTER_ADDR"] for e in envs} == {"127.0.0.1"}
    ports = {e["PET_MASTER_PORT"] for e in envs}
    assert len(ports) == 1 and ports != {"29500"}  # one rendezvous port, chosen free
    assert envs[1]["HOSTNAME"] == "demo-node-0-1"
    assert pods[0].containers[0].argv == ["torchrun", "train.py"]
    assert plan.processes == 6  # torchrun's workers: 3 nodes x 2
    assert plan.success_operator == "All" and not plan.in_order
    assert any("127.0.0.1" in n and "demo-node-0-0.demo" in n for n in plan.notes)


def test_code_mount_paths_are_mapped_into_the_run_directory(tmp_path: Any) -> None:
    (tmp_path / "train.py").write_text("print('hi')\n")
    objects = ktrain.render(
        runtime="torch-distributed",
        num_nodes=2,
        name="demo",
        code=[str(tmp_path / "train.py")],
        command=["python3", "/opt/ktrain/code/train.py"],
    )
    plan = _plan(objects, "torch")
    assert "/opt/ktrain/code" not in _words(plan)
    argv = plan.pods()[0].containers[0].argv
    code_dir = next(f.path.rsplit("/", 1)[0] for f in plan.files if f.path.endswith("/train.py"))
    assert code_dir.startswith(RUN + "/")
    # the --code wrapper copies the ConfigMap's files (its first argument) into a writable
    # directory (its second), where the command runs: both are the run's own directories here
    src, dst = argv[4], argv[5]
    assert src == code_dir and dst.startswith(RUN + "/") and dst != src
    assert argv[-2:] == ["python3", f"{dst}/train.py"]
    # both pods read the same ConfigMap: written once
    assert [f.data for f in plan.files if f.path.endswith("/train.py")] == [b"print('hi')\n"]


def test_mpi_runs_the_launcher_against_this_machine() -> None:
    objects = ktrain.render(
        runtime="deepspeed-distributed",
        num_nodes=3,
        num_proc_per_node=2,
        name="demo",
        command=["mpirun", "--hostfile", "/etc/mpi/hostfile", "python3", "x.py"],
    )
    plan = _plan(objects, "mpi", as_root=True)
    node, launcher = plan.steps
    assert node.skipped == MPI_SKIP_REASON and launcher.skipped is None
    assert [p.name for p in plan.pods()] == ["launcher-0-0"]
    hostfile = next(f for f in plan.files if f.path.endswith("/hostfile"))
    assert hostfile.data == b"localhost slots=6\n"  # 3 hosts x 2 slots (runLauncherAsNode: the launcher is one)
    ct = plan.pods()[0].containers[0]
    assert ct.argv[:3] == ["mpirun", "--hostfile", hostfile.path]
    assert ct.env["OMPI_MCA_orte_default_hostfile"] == hostfile.path
    assert ct.env["OMPI_MCA_plm"] == "isolated" and ct.env["OMPI_ALLOW_RUN_AS_ROOT"] == "1"
    assert plan.processes == 6
    assert plan.success_targets == ["launcher"]
    assert launcher.depends_on == [("node", "Ready")]
    key = next(f for f in plan.files if f.path.endswith("/id_rsa"))
    assert key.mode == 0o640 and key.data.startswith(b"-----BEGIN")


def test_mpi_as_a_user_does_not_allow_root() -> None:
    objects = ktrain.render(runtime="deepspeed-distributed", num_nodes=2, name="demo", command=["mpirun", "x"])
    ct = _plan(objects, "mpi", as_root=False).pods()[0].containers[0]
    assert "OMPI_ALLOW_RUN_AS_ROOT" not in ct.env


V1_TFJOB = """
apiVersion: kubeflow.org/v1
kind: TFJob
metadata: {name: tf}
spec:
  tfReplicaSpecs:
    Chief: {replicas: 1, template: {spec: {containers: [{name: tensorflow, image: tf, command: [python3, t.py]}]}}}
    PS: {replicas: 1, template: {spec: {containers: [{name: tensorflow, image: tf, command: [python3, t.py]}]}}}
    Worker: {replicas: 2, template: {spec: {containers: [{name: tensorflow, image: tf, command: [python3, t.py]}]}}}
"""


def test_converted_tfjob_gets_a_valid_tf_config_per_task() -> None:
    plan = _plan(ktrain.render(V1_TFJOB))
    configs = {p.name: json.loads(p.containers[0].env["TF_CONFIG"]) for p in plan.pods()}
    assert set(configs) == {"chief-0-0", "ps-0-0", "node-0-0", "node-0-1"}
    cluster = configs["chief-0-0"]["cluster"]
    assert all(c["cluster"] == cluster for c in configs.values())  # every task sees the same cluster
    addresses = [a for hosts in cluster.values() for a in hosts]
    assert len(set(addresses)) == 4 and all(a.startswith("127.0.0.1:") for a in addresses)
    assert [(c["task"]["type"], c["task"]["index"]) for c in configs.values()] == [
        ("chief", 0),
        ("ps", 0),
        ("worker", 0),
        ("worker", 1),
    ]
    assert plan.success_targets == ["chief"]


def test_bundled_tensorflow_wrapper_gets_the_shim_and_the_map() -> None:
    objects = ktrain.render(runtime="tensorflow-distributed", num_nodes=2, name="demo")
    # the TF wrapper computes TF_CONFIG in the pod: the shim sits between it and the program
    jobset = next(o for o in objects if o["kind"] == "JobSet")
    jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]["args"] = [
        "python3",
        "t.py",
    ]
    plan = _plan(objects, "torch")
    ct = plan.pods()[1].containers[0]
    assert ct.argv[:2] == ["/bin/sh", "-c"] and ct.argv[3] == "ktrain-env"
    assert ct.argv[4:] == ["/usr/bin/python3", "-m", "ktrain.local.shim", "python3", "t.py"]
    netmap = json.loads(ct.env[NETMAP_ENV])
    assert {"demo-node-0-0:2222", "demo-node-0-1:2222"} <= set(netmap["ports"])
    assert ct.env["KTRAIN_JOBSET"] == "demo" and ct.env["KTRAIN_POD_INDEX"] == "1"
    assert ct.env["KTRAIN_POD_IP"] == "127.0.0.1"


def test_too_many_processes_are_refused_unless_allowed() -> None:
    objects = ktrain.render(
        runtime="torch-distributed", num_nodes=64, num_proc_per_node=8, name="demo", command=["torchrun", "train.py"]
    )
    with pytest.raises(UsageError, match=r"512 local processes .* --max-local-procs 64") as exc:
        _plan(objects, "torch")
    assert "--max-local-procs 512" in (exc.value.hint or "")
    assert _plan(objects, "torch", max_processes=512).processes == 512


def test_flux_is_refused_clearly() -> None:
    objects = ktrain.render(runtime="torch-distributed", name="demo", command=["x"])
    with pytest.raises(UsageError, match="Flux runtime cannot run as local processes"):
        _plan(objects, "flux")


def test_an_image_entrypoint_is_refused() -> None:
    objects = ktrain.render(runtime="torch-distributed", name="demo")
    with pytest.raises(UsageError, match="runs its image's entrypoint"):
        _plan(objects, "torch")


def _jobset(rjobs: list[dict[str, Any]], **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": "js", "namespace": "ns"},
        "spec": {"replicatedJobs": rjobs, **spec},
    }


def _rjob(name: str, container: dict[str, Any], *, n: int = 1, replicas: int = 1, **pod: Any) -> dict[str, Any]:
    return {
        "name": name,
        "replicas": replicas,
        "template": {
            "spec": {"parallelism": n, "completions": n, "template": {"spec": {"containers": [container], **pod}}}
        },
    }


def test_env_is_resolved_as_the_kubelet_does() -> None:
    secret = {"kind": "Secret", "metadata": {"name": "s"}, "data": {"token": base64.b64encode(b"t0k").decode()}}
    cm = {"kind": "ConfigMap", "metadata": {"name": "cm"}, "data": {"A": "1", "B": "2"}}
    container = {
        "name": "c",
        "command": ["echo", "$(GREETING)", "$$(GREETING)", "$(UNSET)"],
        "envFrom": [{"configMapRef": {"name": "cm"}, "prefix": "CM_"}],
        "env": [
            {"name": "WHO", "value": "$(CM_A)-$(POD)"},  # POD is defined later: left as written
            {"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
            {"name": "GREETING", "value": "hi $(POD) in $(NS)"},
            {"name": "NS", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
            {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "s", "key": "token"}}},
            {"name": "OPT", "valueFrom": {"configMapKeyRef": {"name": "nope", "key": "k", "optional": True}}},
            {
                "name": "RJOB",
                "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['jobset.sigs.k8s.io/replicatedjob-name']"}},
            },
            {
                "name": "GIDX",
                "valueFrom": {"fieldRef": {"fieldPath": "metadata.annotations['jobset.sigs.k8s.io/job-global-index']"}},
            },
            {"name": "CPU_M", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu", "divisor": "1m"}}},
            {"name": "MEM_MI", "valueFrom": {"resourceFieldRef": {"resource": "limits.memory", "divisor": "1Mi"}}},
        ],
        "resources": {"limits": {"cpu": "1500m", "memory": "1Gi"}},
    }
    plan = _plan(
        [_jobset([_rjob("a", {"name": "x", "command": ["true"]}), _rjob("w", container, replicas=2)]), secret, cm]
    )
    pod = next(p for p in plan.pods() if p.name == "w-1-0")
    env = pod.containers[0].env
    assert env["CM_A"] == "1" and env["WHO"] == "1-$(POD)"
    assert env["GREETING"] == "hi js-w-1-0-local in $(NS)"  # NS comes later: not yet known
    assert env["TOKEN"] == "t0k" and "OPT" not in env
    assert env["RJOB"] == "w" and env["GIDX"] == "2"  # rJob a has job 0; w has jobs 1 and 2
    assert env["CPU_M"] == "1500" and env["MEM_MI"] == "1024"
    assert pod.containers[0].argv == ["echo", "hi js-w-1-0-local in $(NS)", "$(GREETING)", "$(UNSET)"]


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"name": "X", "valueFrom": {"fieldRef": {"fieldPath": "spec.schedulerName"}}}, "does not know"),
        ({"name": "X", "valueFrom": {"configMapKeyRef": {"name": "cm", "key": "k"}}}, "not in this render"),
        ({"name": "X", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}, "not in this render"),
    ],
)
def test_values_a_local_run_cannot_know_are_refused(env: dict[str, Any], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        _plan([_jobset([_rjob("a", {"name": "c", "command": ["true"], "env": [env]})])])


def test_volumes_map_to_the_run_directory() -> None:
    cm = {"kind": "ConfigMap", "metadata": {"name": "cfg"}, "data": {"conf.yaml": "a: 1\n"}}
    container = {
        "name": "c",
        "command": ["sh", "-c", "cat /etc/cfg/conf.yaml > /scratch/out; ls /data/sub"],
        "workingDir": "/scratch",
        "env": [{"name": "CONF", "value": "/etc/cfg/conf.yaml"}, {"name": "NOT", "value": "/etc/cfgx"}],
        "volumeMounts": [
            {"name": "cfg", "mountPath": "/etc/cfg"},
            {"name": "scratch", "mountPath": "/scratch"},
            {"name": "data", "mountPath": "/data/sub", "subPath": "part"},
        ],
    }
    volumes = [
        {"name": "cfg", "configMap": {"name": "cfg", "defaultMode": 0o400}},
        {"name": "scratch", "emptyDir": {}},
        {"name": "data", "persistentVolumeClaim": {"claimName": "claim"}},
    ]
    plan = _plan([_jobset([_rjob("a", container, n=2, volumes=volumes)]), cm])
    first, second = (p.containers[0] for p in plan.pods())
    cfg = next(f for f in plan.files if f.path.endswith("conf.yaml"))
    assert cfg.data == b"a: 1\n" and cfg.mode == 0o400
    cfg_dir = cfg.path.rsplit("/", 1)[0]
    assert first.env["CONF"] == f"{cfg_dir}/conf.yaml" and first.env["NOT"] == "/etc/cfgx"
    assert first.cwd == f"{RUN}/pods/a-0-0/scratch" and second.cwd == f"{RUN}/pods/a-0-1/scratch"
    assert first.cwd_mapped
    assert first.argv[2] == f"cat {cfg_dir}/conf.yaml > {RUN}/pods/a-0-0/scratch/out; ls {RUN}/claims/claim/part"
    assert f"{RUN}/claims/claim" in plan.dirs


@pytest.mark.parametrize("path", ["../escape", "/abs", "a/../../b"])
def test_volume_paths_stay_inside_the_run_directory(path: str) -> None:
    cm = {"kind": "ConfigMap", "metadata": {"name": "cfg"}, "data": {"k": "v"}}
    container = {"name": "c", "command": ["true"], "volumeMounts": [{"name": "v", "mountPath": "/v"}]}
    volumes = [{"name": "v", "configMap": {"name": "cfg", "items": [{"key": "k", "path": path}]}}]
    with pytest.raises(UsageError, match="relative path"):
        _plan([_jobset([_rjob("a", container, volumes=volumes)]), cm])


def test_unsupported_volumes_are_refused() -> None:
    container = {"name": "c", "command": ["true"], "volumeMounts": [{"name": "v", "mountPath": "/v"}]}
    with pytest.raises(UsageError, match="volume v \\(nfs\\) cannot be mounted"):
        _plan([_jobset([_rjob("a", container, volumes=[{"name": "v", "nfs": {"server": "s", "path": "/"}}])])])


def test_start_order_and_success_policy_are_read_from_the_jobset() -> None:
    init = {"name": "i", "command": ["true"]}
    sidecar = {"name": "side", "command": ["sleep", "9"], "restartPolicy": "Always"}
    rjobs = [
        _rjob("a", {"name": "c", "command": ["true"]}, initContainers=[init, sidecar]),
        {**_rjob("b", {"name": "c", "command": ["true"]}, n=2), "dependsOn": [{"name": "a", "status": "Complete"}]},
    ]
    jobset = _jobset(
        rjobs,
        startupPolicy={"startupPolicyOrder": "InOrder"},
        successPolicy={"operator": "Any", "targetReplicatedJobs": ["b"]},
    )
    plan = _plan([jobset])
    assert plan.in_order and plan.success_operator == "Any" and plan.success_targets == ["b"]
    a, b = plan.steps
    assert b.depends_on == [("a", "Complete")] and b.completions == 2
    assert [(c.name, c.sidecar) for c in a.pods[0].init] == [("i", False), ("side", True)]


def test_initializers_are_refused_with_their_own_hint() -> None:
    objects = ktrain.render(runtime="torchtune-llama3.2-1b", name="demo", dataset="hf://org/ds")
    with pytest.raises(UsageError, match="dataset-initializer runs its image's entrypoint") as exc:
        _plan(objects, "torch")
    assert "--dataset/--model" in (exc.value.hint or "")
