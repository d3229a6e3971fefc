"""`ktrain job run --local --container podman|docker` with a real engine (issue #27).

Skipped unless an engine works here: `<engine> info` succeeds and it runs a container of an image
made here (no registry is needed: the image is `<engine> import`ed from a tarball of a static
busybox, and a second one adds this machine's Debian python3 and its standard library). The
skip says what failed. Each test starts the real command in a subprocess and checks that no
container and no network of the run is left afterwards.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

import ktrain
from ktrain.local.containers import RUN_LABEL


def _engine_run(
    engine: str, *args: str, data: bytes | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([engine, *args], input=data, capture_output=True, timeout=timeout, check=False)


def _static_busybox() -> Path | None:
    found = shutil.which("busybox")
    if found is None:
        return None
    data = Path(found).read_bytes()
    # A dynamic one (an ELF program header PT_INTERP) would need its libraries in the image.
    if data[:5] != b"\x7fELF\x02" or data[5] != 1:  # 64-bit little-endian ELF only
        return None
    phoff, phentsize, phnum = int.from_bytes(data[32:40], "little"), data[54], int.from_bytes(data[56:58], "little")
    headers = (int.from_bytes(data[phoff + i * phentsize : phoff + i * phentsize + 4], "little") for i in range(phnum))
    return None if 3 in headers else Path(found)


def _add(tar: tarfile.TarFile, name: str, data: bytes | None = None, *, mode: int = 0o755, link: str = "") -> None:
    info = tarfile.TarInfo(name)
    info.mode = mode
    if link:
        info.type = tarfile.SYMTYPE
        info.linkname = link
        tar.addfile(info)
    elif data is None:
        info.type = tarfile.DIRTYPE
        tar.addfile(info)
    else:
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))


def _busybox_tar(busybox: Path, tar: tarfile.TarFile) -> None:
    for directory in ("bin", "tmp", "etc", "usr", "usr/bin"):
        _add(tar, directory, mode=0o1777 if directory == "tmp" else 0o755)
    _add(tar, "bin/busybox", busybox.read_bytes())
    for applet in ("sh", "echo", "cat", "true", "sleep", "env", "hostname", "nc", "ls", "touch", "mkdir", "wc"):
        _add(tar, f"bin/{applet}", link="busybox")


def _python_files() -> list[tuple[str, str]]:
    """(path in the image, path here) for the Debian python3, its libraries and standard library."""
    python = "/usr/bin/python3"
    ldd = shutil.which("ldd")
    if not os.path.exists(python) or ldd is None:
        return []
    stdlib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['stdlib'])"], capture_output=True, text=True
    ).stdout.strip()
    if not stdlib.startswith("/usr/lib/python3"):
        return []
    real = os.path.realpath(python)
    binaries = [real, *(str(p) for p in Path(stdlib, "lib-dynload").glob("*.so"))]
    libs: set[str] = set()
    for binary in binaries:
        out = subprocess.run([ldd, binary], capture_output=True, text=True).stdout
        libs.update(re.findall(r"(/\S+\.so[\w.]*)", out))
    files = [(real.lstrip("/"), real), *((lib.lstrip("/"), lib) for lib in sorted(libs))]
    for root, dirs, names in os.walk(stdlib):
        dirs[:] = [d for d in dirs if d not in ("test", "__pycache__", "dist-packages", "site-packages")]
        files += [(os.path.join(root, n).lstrip("/"), os.path.join(root, n)) for n in names]
    return files


def _python_tar(busybox: Path, files: list[tuple[str, str]]) -> Any:
    def build(tar: tarfile.TarFile) -> None:
        _busybox_tar(busybox, tar)
        made = {"bin", "tmp", "etc", "usr", "usr/bin"}
        for inside, here in files:
            parts = inside.split("/")
            for i in range(1, len(parts)):
                directory = "/".join(parts[:i])
                if directory not in made:
                    made.add(directory)
                    _add(tar, directory)
            _add(tar, inside, Path(here).read_bytes(), mode=os.stat(here).st_mode & 0o777)
        _add(tar, "usr/bin/python3", link=os.path.basename(files[0][1]))

    return build


def _import(engine: str, tag: str, build: Any) -> str | None:
    if _engine_run(engine, "image", "inspect", tag).returncode == 0:
        return tag
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        build(tar)
    done = _engine_run(engine, "import", "--change", "ENV PATH=/usr/bin:/bin", "-", tag, data=buffer.getvalue())
    return tag if done.returncode == 0 else None


class Setup:
    def __init__(self, engine: str, busybox: str, python: str | None) -> None:
        self.engine = engine
        self.busybox = busybox
        self.python = python


def _find_setup() -> Setup | str:
    busybox = _static_busybox()
    problems = []
    for engine in ("podman", "docker"):
        if shutil.which(engine) is None:
            problems.append(f"no {engine}")
            continue
        info = _engine_run(engine, "info", timeout=30)
        if info.returncode != 0:
            problems.append(f"`{engine} info` fails: {info.stderr.decode(errors='replace').strip()[-200:]}")
            continue
        if busybox is None:
            return "no static busybox here to build an image from (Debian: apt-get install busybox-static)"
        digest = hashlib.sha256(busybox.read_bytes()).hexdigest()[:12]
        image = _import(engine, f"localhost/ktrain-test-busybox:{digest}", lambda tar: _busybox_tar(busybox, tar))
        if image is None:
            problems.append(f"{engine} cannot import an image")
            continue
        trial = _engine_run(engine, "run", "--rm", image, "true", timeout=60)
        if trial.returncode != 0:
            problems.append(f"{engine} cannot run a container: {trial.stderr.decode(errors='replace').strip()[-300:]}")
            continue
        files = _python_files()
        python = None
        if files:
            key = hashlib.sha256("\n".join(h for _i, h in files).encode() + busybox.read_bytes()).hexdigest()[:12]
            python = _import(engine, f"localhost/ktrain-test-python:{key}", _python_tar(busybox, files))
        return Setup(engine, image, python)
    return "no working container engine: " + "; ".join(problems)


@pytest.fixture(scope="module")
def setup() -> Setup:
    found = _find_setup()
    if isinstance(found, str):
        pytest.skip(found)
    return found


def ktrain_run(setup: Setup, *args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env.pop("NO_COLOR", None)
    return subprocess.run(
        [sys.executable, "-m", "ktrain", "job", "run", "--local", "--container", setup.engine, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        stdin=subprocess.DEVNULL,
    )


def _lines(out: str, pod: str) -> list[str]:
    return [line.split("] ", 1)[1].strip() for line in out.splitlines() if line.startswith(f"[{pod}]")]


def _run_name(stderr: str) -> str:
    match = re.search(r"on the network (ktrain-run-\S+) ", stderr)
    assert match, stderr
    return match.group(1)


def _nothing_left(setup: Setup, run: str) -> None:
    ps = _engine_run(setup.engine, "ps", "--all", "--filter", f"label={RUN_LABEL}={run}", "--format", "{{.Names}}")
    assert ps.stdout.decode().strip() == ""
    assert _engine_run(setup.engine, "network", "inspect", run).returncode != 0


# Rank 0 listens until a connection brings a message; rank 1 sends until rank 0 has gone (a
# connection that delivers nothing, as busybox nc may give under load, is simply tried again).
POD_TALK = textwrap.dedent(
    """\
    echo "rank $PET_NODE_RANK is $(hostname), master $PET_MASTER_ADDR:$PET_MASTER_PORT"
    if [ "$PET_NODE_RANK" = 0 ]; then
      until nc -l -p "$PET_MASTER_PORT" > /tmp/got && [ -s /tmp/got ]; do :; done
      echo "master got: $(cat /tmp/got)"
    else
      sent=0; i=0
      while [ $i -lt 500 ]; do
        if echo "hello from $(hostname)" | nc -w 2 "$PET_MASTER_ADDR" "$PET_MASTER_PORT" 2>/dev/null; then sent=1
        elif [ $sent = 1 ]; then exit 0
        fi
        i=$((i+1)); sleep 0.2
      done
      exit 9
    fi
    """
)


def test_two_pods_reach_each_other_by_their_pod_names(setup: Setup) -> None:
    args = ["-r", "torch-distributed", "--nodes", "2", "--name", "talk", "--image", setup.busybox]
    result = ktrain_run(setup, *args, "--timeout", "120s", "--", "sh", "-c", POD_TALK)
    assert result.returncode == 0, result.stdout + result.stderr
    # The rendezvous address is the pod's DNS name, as on the cluster, resolved on the run's network.
    assert "rank 0 is talk-node-0-0, master talk-node-0-0.talk:29500" in _lines(result.stdout, "node-0-0")
    assert "master got: hello from talk-node-0-1" in _lines(result.stdout, "node-0-0")
    assert "rank 1 is talk-node-0-1, master talk-node-0-0.talk:29500" in _lines(result.stdout, "node-0-1")
    _nothing_left(setup, _run_name(result.stderr))


RUNTIME = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: staged
spec:
  mlPolicy:
    numNodes: 2
  template:
    spec:
      replicatedJobs:
      - name: node
        template:
          metadata:
            labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}
          spec:
            template:
              spec:
                initContainers:
                - name: prepare
                  image: IMAGE
                  command: [sh, -c, 'echo "prepared on $(hostname)" > /shared/flag']
                  volumeMounts: [{name: shared, mountPath: /shared}]
                containers:
                - name: node
                  image: IMAGE
                  workingDir: /shared
                  env: [{name: GREETING, value: "two\\nlines"}]
                  volumeMounts: [{name: shared, mountPath: /shared}]
                volumes:
                - name: shared
                  emptyDir: {}
"""


def test_init_containers_volumes_env_and_working_dir(setup: Setup, tmp_path: Path) -> None:
    runtime = tmp_path / "staged.yaml"
    runtime.write_text(RUNTIME.replace("IMAGE", setup.busybox))
    code = tmp_path / "code"
    code.mkdir()
    (code / "data.txt").write_text("from the code volume\n")
    script = (
        'cat /shared/flag; echo "cwd $(pwd)"; echo "$GREETING" | wc -l; cat /opt/ktrain/code-src/data.txt; '
        "touch /opt/ktrain/code-src/x 2>/dev/null && echo writable || echo read-only"
    )
    result = ktrain_run(
        setup, "--runtime-file", str(runtime), "-r", "staged", "--code", str(code), "--", "sh", "-c", script
    )
    assert result.returncode == 0, result.stdout + result.stderr
    for pod in ("node-0-0", "node-0-1"):
        lines = _lines(result.stdout, pod)
        hostname = next(line for line in lines if line.startswith("prepared on "))
        assert hostname.endswith(f"-{pod}")  # each pod's init container ran first, in its own pod
        assert "2" in lines  # a value with a newline reaches the container whole
        assert "from the code volume" in lines
        assert "read-only" in lines  # a ConfigMap volume is mounted read-only, as by the kubelet
    _nothing_left(setup, _run_name(result.stderr))


def test_a_failing_pod_fails_the_run_with_its_exit_code(setup: Setup) -> None:
    script = '[ "$PET_NODE_RANK" = 1 ] && exit 7; sleep 60'
    started = time.monotonic()
    args = ["-r", "torch-distributed", "--nodes", "2", "--image", setup.busybox]
    result = ktrain_run(setup, *args, "--", "sh", "-c", script)
    assert result.returncode == 7, result.stderr
    assert "pod node-0-1 (container node) exited with code 7" in result.stderr
    assert time.monotonic() - started < 40  # the other pod was stopped, not waited for
    _nothing_left(setup, _run_name(result.stderr))


def test_timeout_and_ctrl_c_stop_every_container(setup: Setup) -> None:
    script = 'trap "echo got TERM; exit 0" TERM; echo started; while true; do sleep 0.1; done'
    args = ["-r", "torch-distributed", "--nodes", "2", "--image", setup.busybox]
    result = ktrain_run(setup, *args, "--timeout", "4s", "--", "sh", "-c", script)
    assert result.returncode == 124, result.stderr
    assert "got TERM" in _lines(result.stdout, "node-0-0")  # stopped with SIGTERM first, as the kubelet does
    _nothing_left(setup, _run_name(result.stderr))

    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ktrain",
            "job",
            "run",
            "--local",
            "--container",
            setup.engine,
            *args,
            "--",
            "sh",
            "-c",
            script,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    assert proc.stdout is not None
    seen = 0
    while seen < 2 and time.monotonic() < deadline:
        line = proc.stdout.readline()
        seen += "started" in line
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    _nothing_left(setup, _run_name(err))


def _report(word: str) -> None:
    import json
    import os
    import socket

    seen = {"word": word, "host": socket.gethostname(), "rank": os.environ["DMLC_TASK_ID"]}
    print(json.dumps({**seen, "tracker": os.environ["DMLC_TRACKER_URI"]}), flush=True)  # noqa: T201 (the pod's log)


def test_trainer_client_with_a_container_backend_runs_the_function_in_its_image(setup: Setup) -> None:
    if setup.python is None:
        pytest.skip("no Debian python3 here to build an image with python")
    client = ktrain.TrainerClient(backend_config=ktrain.ContainerBackendConfig(container_runtime=setup.engine))
    trainer = ktrain.CustomTrainer(func=_report, func_args={"word": "hi"}, num_nodes=2, image=setup.python)
    name = client.train(runtime="xgboost-distributed", trainer=trainer)
    job = client.wait_for_job_status(name, timeout=120, polling_interval=0.5)
    assert [(s.name, s.status) for s in job.steps] == [("node-0", "Succeeded"), ("node-1", "Succeeded")]
    seen = []
    for step in ("node-0", "node-1"):
        lines = [line for line in client.get_job_logs(name, step=step) if line.startswith("{")]
        seen.append(json.loads(lines[-1]))
    assert [(s["word"], s["rank"], s["host"]) for s in seen] == [
        ("hi", "0", f"{name}-node-0-0"),
        ("hi", "1", f"{name}-node-0-1"),
    ]
    assert {s["tracker"] for s in seen} == {f"{name}-node-0-0.{name}"}  # the real pod name, not 127.0.0.1
    client.delete_job(name)
    assert client.list_jobs() == []


def test_the_engine_reads_the_argv_as_the_pod_says(setup: Setup, tmp_path: Path) -> None:
    """`<engine> create` with the argv `run_argv` builds (`create` takes `run`'s options), read back
    with `<engine> inspect`: what the engine understood, not what was meant."""
    from ktrain.local.containers import run_argv
    from ktrain.local.plan import LocalContainer, LocalPod, Mount

    run = f"ktrain-run-argv{os.getpid()}"
    (tmp_path / "code").mkdir()
    (tmp_path / "out").mkdir()
    pod = LocalPod(
        "node-0-1", "demo-node-0-1", "node", 0, 1, [], [], 1, aliases=["demo-node-0-1", "demo-node-0-1.demo"]
    )
    container = LocalContainer(
        name="node",
        argv=[],
        env={"RANK": "1", "MULTI": "a\nb=c", "HOME": "/home/pod"},
        cwd="/work",
        image=setup.busybox,
        command=["sh", "-c", "echo $RANK"],
        args=["x", "y"],
        mounts=[Mount(str(tmp_path / "code"), "/opt/code", True), Mount(str(tmp_path / "out"), "/out")],
        pull_policy="Never",
    )
    argv, passed = run_argv(setup.engine, run, pod, container)
    assert argv[:3] == [setup.engine, "run", "--rm"]
    assert _engine_run(setup.engine, "network", "create", run).returncode == 0
    try:
        env = {**os.environ, **passed}
        created = subprocess.run([setup.engine, "create", *argv[3:]], env=env, capture_output=True, text=True)
        assert created.returncode == 0, created.stderr
        name = f"{run}-node-0-1-node"
        info = json.loads(_engine_run(setup.engine, "container", "inspect", name).stdout)[0]
        config = info["Config"]
        assert {"RANK=1", "MULTI=a\nb=c", "HOME=/home/pod"} <= set(config["Env"])
        assert config["Hostname"] == "demo-node-0-1" and config["WorkingDir"] == "/work"
        entrypoint = config["Entrypoint"]
        assert (entrypoint if isinstance(entrypoint, list) else [entrypoint]) == ["sh"]
        assert config["Cmd"] == ["-c", "echo $RANK", "x", "y"]
        assert config["Labels"][RUN_LABEL] == run and config["Labels"]["ktrain.local/pod"] == "node-0-1"
        mounts = {m["Destination"]: m for m in info["Mounts"]}
        assert mounts["/opt/code"]["Source"] == str(tmp_path / "code") and mounts["/opt/code"]["RW"] is False
        assert mounts["/out"]["RW"] is True
        aliases = info["NetworkSettings"]["Networks"][run]["Aliases"] or []
        assert {"demo-node-0-1", "demo-node-0-1.demo"} <= set(aliases)
    finally:
        _engine_run(setup.engine, "rm", "--force", f"{run}-node-0-1-node")
        _engine_run(setup.engine, "network", "rm", run)
