"""How `--code` and `--pip` reach the trainer: a runtime patch that mounts the code, and a small
shell wrapper around the trainer command.

The wrapper (only when `--code` or `--pip` is given; otherwise the command is left exactly as it
was) changes to the code directory, installs the packages as the Kubeflow SDK's CustomTrainer
does (`packages_to_install`, `pip_index_urls`: the first URL is the index, the others extra
indexes), prints one line saying what it installs, and `exec`s the command, so its exit code and
signals reach JobSet unchanged.
"""

from __future__ import annotations

import shlex
from typing import Any

from ktrain import constants as c
from ktrain.errors import UsageError

Obj = dict[str, Any]

PATCH_MANAGER = f"{c.DEFAULT_PATCH_MANAGER}-code"
CODE_ANNOTATION = c.CODE_DIGEST_KEY  # the code's digest, on the TrainJob and the JobSet
WRAPPER_NAME = "ktrain-launch"  # $0 of the wrapper script: what `ps` shows
INITIALIZER_ANCESTORS = (c.ANCESTOR_DATASET_INITIALIZER, c.ANCESTOR_MODEL_INITIALIZER)


def wrapper_script(*, code_dir: str | None, packages: list[str], index_urls: list[str]) -> str:
    lines = ["set -e"]
    if code_dir:
        lines.append(f"cd {shlex.quote(code_dir)}")
    if packages:
        quoted = " ".join(shlex.quote(p) for p in packages)
        indexes = ""
        if index_urls:
            indexes = f" --index-url {shlex.quote(index_urls[0])}"
            indexes += "".join(f" --extra-index-url {shlex.quote(u)}" for u in index_urls[1:])
        lines += [
            f'echo "ktrain: pip install {" ".join(packages)}" >&2',
            'PY="$(command -v python3 || command -v python)"',
            f"PIP_DISABLE_PIP_VERSION_CHECK=1 $PY -m pip install --quiet --no-warn-script-location{indexes} {quoted}"
            f" || PIP_DISABLE_PIP_VERSION_CHECK=1 $PY -m pip install --quiet --no-warn-script-location --user"
            f"{indexes} {quoted}",
        ]
    lines.append('exec "$@"')
    return "\n".join(lines)


def wrap(command: list[str], *, code_dir: str | None, packages: list[str], index_urls: list[str]) -> list[str]:
    """`sh -c SCRIPT ktrain-launch COMMAND...`: the command's words stay words (no re-quoting)."""
    if not command:
        raise UsageError("--code/--pip: the runtime's trainer has no command to run", hint="give one after `--`")
    return [
        "sh",
        "-c",
        wrapper_script(code_dir=code_dir, packages=packages, index_urls=index_urls),
        WRAPPER_NAME,
        *command,
    ]


def is_wrapped(command: list[str] | None) -> bool:
    return command is not None and len(command) >= 4 and command[0] == "sh" and command[3] == WRAPPER_NAME


def mount_patch(runtime_template: Obj, volume: Obj, mount_path: str, digest: str) -> Obj:
    """The runtime patch mounting the code read-only into every container of every replicated
    job but the initializers (the trainer, an MPI launcher and its workers)."""
    rjobs = []
    for rjob in (runtime_template.get("spec") or {}).get("replicatedJobs") or []:
        if not isinstance(rjob, dict) or not isinstance(rjob.get("name"), str):
            continue
        labels = ((rjob.get("template") or {}).get("metadata") or {}).get("labels") or {}
        if labels.get(c.LABEL_ANCESTOR) in INITIALIZER_ANCESTORS:
            continue
        pod = (((rjob.get("template") or {}).get("spec") or {}).get("template") or {}).get("spec") or {}
        containers = [
            {"name": ct["name"], "volumeMounts": [{"name": volume["name"], "mountPath": mount_path, "readOnly": True}]}
            for ct in pod.get("containers") or []
            if isinstance(ct, dict) and isinstance(ct.get("name"), str)
        ]
        if containers:
            rjobs.append(
                {
                    "name": rjob["name"],
                    "template": {"spec": {"template": {"spec": {"volumes": [volume], "containers": containers}}}},
                }
            )
    if not rjobs:
        raise UsageError("--code: the runtime has no trainer pods to mount the code into")
    # The digest also lands on the JobSet (`job get` shows it), as patch annotations do (ENGINE.md §4.1).
    template = {"metadata": {"annotations": {CODE_ANNOTATION: digest}}, "spec": {"replicatedJobs": rjobs}}
    return {"manager": PATCH_MANAGER, "trainingRuntimeSpec": {"template": template}}
