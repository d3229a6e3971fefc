"""Run a rendered trainer container here, as the kubelet would start it: its volumes laid out on
disk (a ConfigMap volume as the kubelet's atomic writer writes one: the payload in a timestamped
directory, `..data` linking to it, top-level links into `..data`, each file with its item's mode;
the kubelet also mounts it read-only, which a test running as root cannot show with modes, so
tests check the mount's `readOnly` and where the command runs; an emptyDir as an empty
directory), the mount paths in its command mapped to those directories, and `$(VAR)` in command
and args expanded from the container's env as the kubelet does (k8s.io/kubernetes
third_party/forked/golang/expansion, `Expand` with `MappingFuncFor`)."""

from __future__ import annotations

import base64
import os
import stat
import subprocess
from pathlib import Path
from typing import Any

Obj = dict[str, Any]
ANCESTOR = "trainer.kubeflow.org/trainjob-ancestor-step"


def kubelet_expand(text: str, env: dict[str, str]) -> str:
    """The kubelet's `$(VAR)` expansion: `$$` is `$`, `$(NAME)` is NAME's value (left as written
    when NAME is not defined), any other `$` stays."""
    out: list[str] = []
    checkpoint = 0
    cursor = 0
    while cursor < len(text):
        if text[cursor] == "$" and cursor + 1 < len(text):
            out.append(text[checkpoint:cursor])
            rest = text[cursor + 1 :]
            if rest[0] == "$":
                read, is_var, advance = "$", False, 1
            elif rest[0] == "(":
                close = rest.find(")", 1)
                if close == -1:
                    read, is_var, advance = "$(", False, 1
                else:
                    read, is_var, advance = rest[1:close], True, close + 1
            else:
                read, is_var, advance = "$" + rest[0], False, 1
            out.append(env.get(read, f"$({read})") if is_var else read)
            cursor += advance
            checkpoint = cursor + 1
        cursor += 1
    return "".join(out) + text[checkpoint:]


def trainer_pod(objects: list[Obj], rjob: str | None = None) -> tuple[Obj, Obj]:
    """(pod spec, `node` container) of the trainer step's JobSet pod template (of the replicated
    job named `rjob`, when given: an MPI job's workers)."""
    jobset = next(o for o in objects if o["kind"] == "JobSet")

    def chosen(r: Obj) -> bool:
        return bool(
            r["name"] == rjob
            if rjob
            else r["template"].get("metadata", {}).get("labels", {}).get(ANCESTOR) == "trainer"
        )

    trainer = next(r for r in jobset["spec"]["replicatedJobs"] if chosen(r))
    pod = trainer["template"]["spec"]["template"]["spec"]
    return pod, next(c for c in pod["containers"] if c["name"] == "node")


def _write_config_map_volume(target: Path, volume: Obj, maps: dict[str, Obj]) -> None:
    payload = target / "..2026_01_01_00_00_00.000000001"
    default_mode = volume["projected"].get("defaultMode", 0o644)
    top: set[str] = set()
    for source in volume["projected"]["sources"]:
        cm = maps[source["configMap"]["name"]]
        for item in source["configMap"]["items"]:
            path = payload / item["path"]
            path.parent.mkdir(parents=True, exist_ok=True)
            if item["key"] in (cm.get("data") or {}):
                path.write_bytes(cm["data"][item["key"]].encode())
            else:
                path.write_bytes(base64.b64decode(cm["binaryData"][item["key"]]))
            path.chmod(item.get("mode", default_mode))
            top.add(item["path"].split("/")[0])
    os.symlink(payload.name, target / "..data")
    for name in sorted(top):
        os.symlink(f"..data/{name}", target / name)


def lay_out_volumes(objects: list[Obj], root: Path, rjob: str | None = None) -> dict[str, Path]:
    """The trainer container's (or `rjob`'s `node` container's) mounts as directories under
    `root`: mountPath -> directory."""
    pod, container = trainer_pod(objects, rjob)
    maps = {o["metadata"]["name"]: o for o in objects if o["kind"] == "ConfigMap"}
    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    mounts: dict[str, Path] = {}
    for index, mount in enumerate(container.get("volumeMounts", [])):
        volume = volumes[mount["name"]]
        target = root / f"volume-{index}-{mount['name']}"
        target.mkdir(parents=True)
        if "projected" in volume:
            _write_config_map_volume(target, volume, maps)
        # anything else (an emptyDir, the MPI SSH keys' Secret) is an empty directory here
        mounts[mount["mountPath"]] = target
    return mounts


def write_exe(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)


def run_container(
    objects: list[Obj],
    root: Path,
    bin_dir: Path,
    env: dict[str, str],
    shell: str | None = None,
    timeout: float = 60,
) -> tuple[subprocess.CompletedProcess[str], dict[str, Path]]:
    """Start the trainer container's command as the kubelet would (PATH: `bin_dir` first). The
    mount paths, when a whole word, are replaced by their directories; `shell` replaces `sh`."""
    _, container = trainer_pod(objects)
    root.mkdir(parents=True, exist_ok=True)
    mounts = lay_out_volumes(objects, root / "volumes")
    pod_env = {e["name"]: e["value"] for e in container.get("env", []) if "value" in e}
    words = [kubelet_expand(w, pod_env) for w in container["command"] + container.get("args", [])]
    words = [str(mounts[w]) if w in mounts else w for w in words]
    if shell is not None and words[0] == "sh":
        # busybox is one binary: its shell is the `sh` applet (`busybox sh -c ...`)
        words[0:1] = [shell, "sh"] if os.path.basename(shell) == "busybox" else [shell]
    full_env = {**pod_env, **env, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    raw = subprocess.run(words, env=full_env, capture_output=True, timeout=timeout, cwd=root)
    # Decoded by hand: text mode would turn a value's "\r\n" into "\n" (universal newlines),
    # and the tests compare what the pod wrote byte for byte.
    result = subprocess.CompletedProcess(
        raw.args,
        raw.returncode,
        raw.stdout.decode("utf-8", "surrogateescape"),
        raw.stderr.decode("utf-8", "surrogateescape"),
    )
    return result, mounts
