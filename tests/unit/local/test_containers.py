"""Container mode (`ktrain job run --local --container podman|docker`), without an engine: what the
planner keeps as on the cluster, and the `<engine> run` command built for each container.

The argv is checked against the engines' documented options: podman-run(1) (podman 4.3, Debian
bookworm's man page: `--env` "If an environment variable is specified without a value, Podman
will check the host environment for a value", `--mount type=bind,...` with `src, source`, `dst,
destination, target`, `ro, readonly: true or false`, `--network-alias`, `--pull=policy` always |
missing | never | newer, `--entrypoint`, `--hostname`, `--workdir`, `--label`, `--rm`,
`--http-proxy`), and docker's `container run` reference (docker/cli
docs/reference/commandline/container_run.md: `--env VAR1` "the Docker CLI client checks the value
the variable has in your local environment", `--pull` always | missing | never, `--network-alias`,
`--entrypoint string`) with its `--mount` parser (docker/cli opts/mount.go: CSV fields, `source`,
`target`, `readonly=<bool>`). tests/cli/test_job_run_container.py runs them with a real engine.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ktrain
from ktrain.errors import UsageError
from ktrain.local.containers import container_name, find_engine, run_argv
from ktrain.local.plan import LocalContainer, LocalPod, Mount, PlanOptions, RunPlan, plan_run

RUN = "/tmp/ktrain-run-abc_123"


def _plan(objects: list[dict[str, Any]], policy: str | None = None, **options: Any) -> RunPlan:
    ports = itertools.count(40000)
    opts = PlanOptions(
        run_dir=RUN, alloc_port=lambda: next(ports), python="/usr/bin/python3", ml_policy=policy, container=True
    )
    for key, value in options.items():
        setattr(opts, key, value)
    return plan_run(objects, opts)


def _jobset(objects: list[dict[str, Any]]) -> dict[str, Any]:
    return next(o for o in objects if o["kind"] == "JobSet")


# --------------------------------------------------------------------------- the plan


def test_host_names_and_ports_stay_as_on_the_cluster() -> None:
    objects = ktrain.render(runtime="torch-distributed", num_nodes=2, name="demo", command=["torchrun", "train.py"])
    plan = _plan(objects, "torch")
    assert plan.container and plan.run_name == "ktrain-run-abc_123"
    pods = plan.pods()
    envs = [p.containers[0].env for p in pods]
    assert {e["PET_MASTER_ADDR"] for e in envs} == {"demo-node-0-0.demo"}
    assert {e["PET_MASTER_PORT"] for e in envs} == {"29500"}
    assert "HOSTNAME" not in envs[0]  # the engine sets it from --hostname
    assert not plan.netmap.ports and not any("127.0.0.1" in n for n in plan.notes)
    assert pods[1].aliases == [
        "demo-node-0-1",
        "demo-node-0-1.demo",
        "demo-node-0-1.demo.default.svc",
        "demo-node-0-1.demo.default.svc.cluster.local",
        "demo",
        "demo.default.svc",
        "demo.default.svc.cluster.local",
    ]
    ct = pods[0].containers[0]
    assert (ct.command, ct.args) == (["torchrun", "train.py"], [])
    assert ct.image.startswith("pytorch/pytorch:")


def test_code_volumes_are_mounted_at_their_real_paths(tmp_path: Any) -> None:
    (tmp_path / "train.py").write_text("print('hi')\n")
    objects = ktrain.render(
        runtime="torch-distributed",
        num_nodes=2,
        name="demo",
        code=[str(tmp_path / "train.py")],
        command=["python3", "/opt/ktrain/code/train.py"],
    )
    plan = _plan(objects, "torch")
    ct = plan.pods()[1].containers[0]
    assert "/opt/ktrain/code/train.py" in ct.argv  # no path rewriting
    by_target = {m.target: m for m in ct.mounts}
    source = by_target["/opt/ktrain/code-src"]
    assert source.read_only and source.source.startswith(f"{RUN}/volumes/")  # a ConfigMap: read-only, shared
    code = by_target["/opt/ktrain/code"]
    assert not code.read_only and code.source == f"{RUN}/pods/node-0-1/ktrain-workdir"  # the pod's emptyDir
    assert code.source in plan.dirs
    assert any(f.path.startswith(source.source) and f.data == b"print('hi')\n" for f in plan.files)


def test_a_container_without_a_command_runs_its_image_entrypoint() -> None:
    objects = ktrain.render(runtime="torch-distributed", name="demo")
    ct = _plan(objects, "torch").pods()[0].containers[0]
    assert ct.command == [] and ct.image
    argv, _ = run_argv("podman", RUN, _pod(), ct)
    assert "--entrypoint" not in argv and argv[-1] == ct.image


def test_args_without_command_go_to_the_image_entrypoint() -> None:
    objects = ktrain.render(runtime="torch-distributed", name="demo")
    container = _jobset(objects)["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]
    container["env"] = [{"name": "EPOCHS", "value": "3"}]
    container["args"] = ["--epochs", "$(EPOCHS)", "--index", "$(JOB_COMPLETION_INDEX)"]
    ct = _plan(objects, "torch").pods()[0].containers[0]
    assert ct.args == ["--epochs", "3", "--index", "0"]  # $(VAR) expanded, as the kubelet does
    argv, _ = run_argv("docker", RUN, _pod(), ct)
    assert argv[-5:] == [ct.image, "--epochs", "3", "--index", "0"] and "--entrypoint" not in argv


def test_mpi_worker_pods_run_and_the_hostfile_is_left_alone() -> None:
    objects = ktrain.render(
        runtime="deepspeed-distributed", num_nodes=2, name="ds", command=["mpirun", "python3", "t.py"]
    )
    plan = _plan(objects, "mpi")
    assert [s.skipped for s in plan.steps] == [None, None]
    assert sorted(p.name for p in plan.pods()) == ["launcher-0-0", "node-0-0"]  # the launcher is a node too
    hostfiles = [f.data.decode() for f in plan.files if f.path.endswith("/hostfile")]
    assert hostfiles == ["ds-node-0-0.ds slots=1\nds-launcher-0-0.ds slots=1\n"]
    launcher = next(p for p in plan.pods() if p.rjob == "launcher").containers[0]
    assert "OMPI_MCA_plm" not in launcher.env  # mpirun reaches the workers over ssh, as on the cluster


def test_the_pod_ip_is_the_pod_host_name_with_a_note() -> None:
    objects = ktrain.render(runtime="torch-distributed", name="demo", command=["true"])
    spec = _jobset(objects)["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    spec["containers"][0]["env"].append({"name": "MY_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}})
    plan = _plan(objects, "torch")
    assert plan.pods()[0].containers[0].env["MY_IP"] == "demo-node-0-0"
    assert any("status.podIP is the pod's host name" in n for n in plan.notes)


def test_resource_limits_are_not_applied_and_say_so() -> None:
    objects = ktrain.render(runtime="torch-distributed", name="demo", command=["true"], resources_per_node={"cpu": 2})
    notes = _plan(objects, "torch").notes
    assert any("resource requests and limits" in n and "not applied" in n for n in notes)


def test_subpath_directories_of_an_empty_dir_are_made_for_the_run() -> None:
    objects = ktrain.render(runtime="torch-distributed", name="demo", command=["true"])
    spec = _jobset(objects)["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    spec.setdefault("volumes", []).append({"name": "scratch", "emptyDir": {}})
    spec["containers"][0].setdefault("volumeMounts", []).append(
        {"name": "scratch", "mountPath": "/data/out", "subPath": "run/out", "readOnly": True}
    )
    plan = _plan(objects, "torch")
    mount = next(m for m in plan.pods()[0].containers[0].mounts if m.target == "/data/out")
    assert mount == Mount(source=f"{RUN}/pods/node-0-0/scratch/run/out", target="/data/out", read_only=True)
    assert mount.source in plan.dirs


def test_a_flux_runtime_is_planned_in_containers() -> None:
    objects = ktrain.render(runtime="torch-distributed", name="demo", command=["true"])
    _plan(objects, "flux")  # its broker and init container run in their images (refused as processes)
    with pytest.raises(UsageError, match="Flux"):
        _plan(objects, "flux", container=False)


# --------------------------------------------------------------------------- the engine's argv


def _pod() -> LocalPod:
    return LocalPod(
        name="node-0-1",
        hostname="demo-node-0-1",
        rjob="node",
        job_index=0,
        index=1,
        init=[],
        containers=[],
        processes=1,
        aliases=["demo-node-0-1", "demo-node-0-1.demo", "demo"],
    )


def _container(**fields: Any) -> LocalContainer:
    values: dict[str, Any] = {
        "name": "node",
        "argv": ["python3", "-c", "print(1)", "--lr", "0.1"],
        "env": {"PET_NODE_RANK": "1", "KEY": "line one\nline two", "PATH": "/opt/bin:/usr/bin"},
        "cwd": "/workspace",
        "image": "pytorch/pytorch:2",
        "command": ["python3", "-c", "print(1)"],
        "args": ["--lr", "0.1"],
        "mounts": [Mount("/tmp/r/volumes/0-code", "/opt/code", True), Mount("/tmp/r/pods/p/out", "/out")],
    }
    values.update(fields)
    return LocalContainer(**values)


def test_podman_argv_is_the_pod_as_written() -> None:
    argv, passed = run_argv("podman", "ktrain-run-x", _pod(), _container())
    assert argv == [
        "podman",
        "run",
        "--rm",
        "--name",
        "ktrain-run-x-node-0-1-node",
        "--hostname",
        "demo-node-0-1",
        "--network",
        "ktrain-run-x",
        "--network-alias",
        "demo-node-0-1",
        "--network-alias",
        "demo-node-0-1.demo",
        "--network-alias",
        "demo",
        "--label",
        "ktrain.local/run=ktrain-run-x",
        "--label",
        "ktrain.local/pod=node-0-1",
        "--http-proxy=false",
        "--env",
        "PET_NODE_RANK",
        "--env",
        "KEY",
        "--env",
        "PATH=/opt/bin:/usr/bin",
        "--mount",
        "type=bind,source=/tmp/r/volumes/0-code,target=/opt/code,readonly=true",
        "--mount",
        "type=bind,source=/tmp/r/pods/p/out,target=/out",
        "--workdir",
        "/workspace",
        "--entrypoint",
        "python3",
        "pytorch/pytorch:2",
        "-c",
        "print(1)",
        "--lr",
        "0.1",
    ]
    # Values travel in the client's environment: a newline or a secret never reaches the command line.
    assert passed == {"PET_NODE_RANK": "1", "KEY": "line one\nline two"}
    assert not any("line one" in word for word in argv)


def test_docker_argv_has_no_podman_only_option() -> None:
    argv, _ = run_argv("docker", "ktrain-run-x", _pod(), _container(), remove=False)
    assert argv[:3] == ["docker", "run", "--name"]  # without --rm
    assert "--http-proxy=false" not in argv
    assert container_name("ktrain-run-x", _pod(), _container()) in argv


@pytest.mark.parametrize(
    ("policy", "run_policy", "flag"),
    [
        ("IfNotPresent", None, "--pull=missing"),
        ("Always", None, "--pull=always"),
        ("Never", None, "--pull=never"),
        ("", None, None),  # the engine's default (missing)
        ("Always", "never", "--pull=never"),  # the run's choice wins
    ],
)
def test_pull_policy(policy: str, run_policy: str | None, flag: str | None) -> None:
    argv, _ = run_argv("podman", "r", _pod(), _container(pull_policy=policy), pull=run_policy)
    pulls = [w for w in argv if w.startswith("--pull")]
    assert pulls == ([flag] if flag else [])


@pytest.mark.parametrize(
    "name", ["HOME", "http_proxy", "HTTPS_PROXY", "DOCKER_HOST", "CONTAINER_HOST", "XDG_RUNTIME_DIR"]
)
def test_names_the_engine_client_reads_go_inline(name: str) -> None:
    argv, passed = run_argv("podman", "r", _pod(), _container(env={name: "v"}))
    assert f"{name}=v" in argv and name not in passed


@pytest.mark.parametrize("path", ["/data/a,b", '/data/"q"', "/data/a\nb"])
def test_a_mount_path_the_engine_cannot_carry_is_refused(path: str) -> None:
    with pytest.raises(UsageError, match="cannot carry"):
        run_argv("docker", "r", _pod(), _container(mounts=[Mount("/tmp/r/x", path)]))


def test_no_engine_installed_is_a_clear_error(tmp_path: Any) -> None:
    env = {"PATH": str(tmp_path)}
    with pytest.raises(UsageError, match="no container engine to run the pods in: docker is not installed; podman is"):
        find_engine(None, env)
    with pytest.raises(UsageError, match="podman is not installed"):
        find_engine("podman", env)
    with pytest.raises(UsageError, match="must be podman or docker"):
        find_engine("lxc", env)


def test_an_engine_that_cannot_reach_its_daemon_is_skipped(tmp_path: Any) -> None:
    fake = tmp_path / "docker"  # a client whose daemon is not there, as `docker info` then fails
    fake.write_text("#!/bin/sh\necho 'Cannot connect to the Docker daemon' >&2\nexit 1\n")
    fake.chmod(0o755)
    with pytest.raises(UsageError, match=r"`docker info` fails \(Cannot connect to the Docker daemon\)"):
        find_engine(None, {"PATH": str(tmp_path)})


_NAMES = st.text(alphabet=st.characters(min_codepoint=33, max_codepoint=126, blacklist_characters="="), min_size=1)


@settings(max_examples=300, deadline=None)
@given(env=st.dictionaries(_NAMES, st.text(), max_size=8))
def test_every_variable_reaches_the_container_and_passed_values_stay_off_the_command_line(env: dict[str, str]) -> None:
    argv, passed = run_argv("podman", "r", _pod(), _container(env=env))
    words = [argv[i + 1] for i, w in enumerate(argv) if w == "--env"]
    inline = dict(w.split("=", 1) for w in words if "=" in w)
    named = [w for w in words if "=" not in w]
    assert sorted(named) == sorted(passed) and set(passed) | set(inline) == set(env) and not set(passed) & set(inline)
    assert {**passed, **inline} == env


def test_an_env_name_with_an_equals_sign_is_refused() -> None:
    with pytest.raises(UsageError, match="env name 'A=B'"):
        run_argv("docker", "r", _pod(), _container(env={"A=B": "x"}))
