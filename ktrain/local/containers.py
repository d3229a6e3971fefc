"""A local run in containers: each pod of the plan as a container of its real image, under podman
or docker (`ktrain job run --local --container podman|docker`).

The run gets a user-defined network of its own (`<engine> network create`), on which every pod's
names (`LocalPod.aliases`: `<jobset>-<rjob>-<j>-<p>`, with `.<subdomain>` and the service domain
after it, and the subdomain itself) are network aliases, resolved by the engine's DNS; so nothing
is rewritten: ports are the pod's, and each volume is bind-mounted at its mount path. `run_argv` is
the one place the engine's command line is built (pure; tests/unit/local/test_containers.py holds
it to the engines' documented options):

- `--env NAME`, with the value in the engine client's own environment: both engines take a name
  without a value from there (podman-run(1) `--env`; docker's `container run` reference, "Set
  environment variables"), so values of any content (newlines, secrets) stay out of the command
  line and out of `--env-file`, whose quoting differs between engine versions. Names the engine
  client itself reads (PATH, HOME, proxies, DOCKER_*, CONTAINER_*, ...) go as `--env NAME=VALUE`.
- `--mount type=bind,source=S,target=T[,readonly=true]` (podman-run(1) `--mount`; docker's
  opts/mount.go): a path holding `,` or `"` cannot be written there and is refused.
- `--entrypoint` the command's first word, then the image, then the rest of the command and the
  args: the same argv as the kubelet's (command replaces ENTRYPOINT, args CMD), in the one form
  both engines take (`--entrypoint` as a plain string).
- `--pull` from the container's imagePullPolicy (or the run's choice): always | missing | never.
- podman only: `--http-proxy=false`, so the host's proxy variables do not reach the pod.

Not applied: resource requests and limits, GPUs, securityContext, probes; noted by the planner.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from typing import TYPE_CHECKING

from ktrain.errors import UsageError

if TYPE_CHECKING:
    from ktrain.local.run_plan import LocalContainer, LocalPod

ENGINES = ("podman", "docker")
RUN_LABEL = "ktrain.local/run"
POD_LABEL = "ktrain.local/pod"
PULL_POLICIES = {"Always": "always", "IfNotPresent": "missing", "Never": "never"}
# Variables the engine client reads for itself: a pod's value goes inline, not through its environment.
_ENGINE_NAMES = frozenset(
    {"PATH", "HOME", "TMPDIR", "USER", "SHELL", "PWD", "TERM"}
    | {p for name in ("http_proxy", "https_proxy", "no_proxy", "all_proxy") for p in (name, name.upper())}
)
_ENGINE_PREFIXES = ("DOCKER_", "CONTAINER", "PODMAN_", "BUILDAH_", "REGISTRY_", "XDG_", "LD_", "SSL_", "GO", "TMP")
_ENGINE_TIMEOUT = 60.0  # seconds for one network/stop/rm call


def container_name(run: str, pod: LocalPod, container: LocalContainer) -> str:
    return f"{run}-{pod.name}-{container.name}"


def _passes_inline(name: str) -> bool:
    return name in _ENGINE_NAMES or name.startswith(_ENGINE_PREFIXES) or name.endswith("*")


def _mount_spec(source: str, target: str, read_only: bool) -> str:
    for path in (source, target):
        if any(ch in path for ch in ',"\n'):
            raise UsageError(
                f"the mount {target} (from {source}) has a ',', '\"' or newline in its path, which "
                "a container engine's --mount cannot carry"
            )
    spec = f"type=bind,source={source},target={target}"
    return spec + ",readonly=true" if read_only else spec


def run_argv(
    engine: str,
    run: str,
    pod: LocalPod,
    container: LocalContainer,
    *,
    remove: bool = True,
    pull: str | None = None,
) -> tuple[list[str], dict[str, str]]:
    """`<engine> run ...` for one container of a pod, and the variables its client must have in
    its environment (the pod's values, passed by name). `pull`: the run's pull policy (always |
    missing | never), else the container's imagePullPolicy, else the engine's default (missing)."""
    argv = [engine, "run"]
    if remove:
        argv.append("--rm")
    argv += ["--name", container_name(run, pod, container), "--hostname", pod.hostname, "--network", run]
    for alias in pod.aliases:
        argv += ["--network-alias", alias]
    argv += ["--label", f"{RUN_LABEL}={run}", "--label", f"{POD_LABEL}={pod.name}"]
    if engine == "podman":
        argv.append("--http-proxy=false")
    policy = pull or PULL_POLICIES.get(container.pull_policy)
    if policy:
        argv.append(f"--pull={policy}")
    passed: dict[str, str] = {}
    for name, value in container.env.items():
        if "=" in name or not name:  # the API server refuses these; `--env A=B` would set A
            raise UsageError(f"pod {pod.name}: container {container.name} has an env name {name!r} with '=' or empty")
        if _passes_inline(name):
            argv += ["--env", f"{name}={value}"]
        else:
            argv += ["--env", name]
            passed[name] = value
    for mount in container.mounts:
        argv += ["--mount", _mount_spec(mount.source, mount.target, mount.read_only)]
    if container.cwd:
        argv += ["--workdir", container.cwd]
    if container.command:
        argv += ["--entrypoint", container.command[0]]
    argv.append(container.image)
    argv += [*container.command[1:], *container.args]
    return argv, passed


class Engine:
    """The engine's client on this machine: the calls around the containers' `run`s."""

    def __init__(self, name: str, path: str, env: dict[str, str]) -> None:
        self.name = name
        self.path = path
        self.env = env  # the client's environment (this process's, with DOCKER_HOST / CONTAINER_HOST)

    def call(self, *args: str, timeout: float = _ENGINE_TIMEOUT) -> subprocess.CompletedProcess[str]:
        try:
            return subprocess.run(
                [self.path, *args],
                env=self.env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=timeout,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return subprocess.CompletedProcess([self.path, *args], 124, "", f"{self.name} {args[0]}: no answer")
        except OSError as exc:
            return subprocess.CompletedProcess([self.path, *args], 127, "", str(exc))

    def works(self) -> tuple[bool, str]:
        """`<engine> info` succeeds: a client that reaches its engine (a docker client without its
        daemon does not)."""
        done = self.call("info", timeout=30)
        return done.returncode == 0, "" if done.returncode == 0 else _last_line(done)

    def create_network(self, run: str) -> None:
        done = self.call("network", "create", "--label", f"{RUN_LABEL}={run}", run)
        if done.returncode != 0:
            raise UsageError(
                f"{self.name} could not create the run's network: {_last_line(done)}",
                hint=f"check that `{self.name} info` works here",
            )

    def stop(self, names: list[str], grace: float) -> None:
        if names:
            self.call("stop", "--time", str(max(0, round(grace))), *names, timeout=grace + _ENGINE_TIMEOUT)

    def remove(self, names: list[str]) -> None:
        if names:
            self.call("rm", "--force", *names)

    def remove_network(self, run: str) -> None:
        self.call("network", "rm", run)

    def run_env(self, passed: dict[str, str]) -> dict[str, str]:
        return {**self.env, **passed}


def _last_line(done: subprocess.CompletedProcess[str]) -> str:
    text = (done.stderr or done.stdout or "").strip()
    return text.splitlines()[-1] if text else f"exit code {done.returncode}"


def find_engine(wanted: str | None, env: dict[str, str], host: str | None = None) -> Engine:
    """The engine to run with: `wanted` (podman | docker), else the first of docker, podman whose
    `info` succeeds (the Kubeflow SDK's container backend tries Docker first). `host`: the engine's
    address (DOCKER_HOST for docker, CONTAINER_HOST for podman)."""
    names = [wanted] if wanted else ["docker", "podman"]
    for name in names:
        if name not in ENGINES:
            raise UsageError(f"--container must be podman or docker, not {name!r}")
    problems = []
    for name in names:
        path = shutil.which(name, path=env.get("PATH", os.defpath))
        if path is None:
            problems.append(f"{name} is not installed")
            continue
        client_env = dict(env)
        if host:
            client_env["DOCKER_HOST" if name == "docker" else "CONTAINER_HOST"] = host
        engine = Engine(name, path, client_env)
        if wanted:
            return engine  # its own errors say what is wrong, when the network is made
        ok, why = engine.works()
        if ok:
            return engine
        problems.append(f"`{name} info` fails ({why})" if why else f"`{name} info` fails")
    raise UsageError(
        "no container engine to run the pods in: " + "; ".join(problems),
        hint="install podman or docker, or run the pods as processes (`ktrain job run --local` without --container)",
    )
