"""How `--code` and `--pip` reach the trainer: a runtime patch that mounts the code, and a small
shell wrapper around the trainer command.

The wrapper (only when `--code` or `--pip` is given; otherwise the command is left exactly as it
was) is one fixed script: every value it handles (the code directories, pip's arguments, the
command) arrives as a positional argument and is only ever used as `"$1"` or `"$@"`, never
pasted into shell text, so no package name, URL or argument can run a command or expand a
variable. It copies the code from the ConfigMap volume (read-only, as the kubelet mounts it)
into a writable emptyDir and changes there, installs the packages as the Kubeflow SDK's
CustomTrainer does (`packages_to_install`, `pip_index_urls`: the first URL is the index, the
others extra indexes), prints one line saying what it installs, and `exec`s the command, so its
exit code and signals reach JobSet unchanged. Kubernetes expands `$(VAR)` in a container's
command and args; the pip arguments ktrain moves there are escaped (`$` as `$$`) so they arrive
as given, while the user's own command keeps Kubernetes' meaning, as without the wrapper.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ktrain import constants as c
from ktrain.errors import UsageError

if TYPE_CHECKING:
    from ktrain.util.jsondata import Obj

PATCH_MANAGER = f"{c.DEFAULT_PATCH_MANAGER}-code"
CODE_ANNOTATION = c.CODE_DIGEST_KEY  # the code's digest, on the TrainJob and the JobSet
WRAPPER_NAME = "ktrain-launch"  # $0 of the wrapper script: what `ps` shows
INITIALIZER_ANCESTORS = (c.ANCESTOR_DATASET_INITIALIZER, c.ANCESTOR_MODEL_INITIALIZER)
WORKDIR_VOLUME = "ktrain-workdir"
# Where the wrapped trainer container sees the ConfigMap volume; it copies it into the emptyDir
# at the code path (`MOUNT_PATH` of ktrain.inputs.code_bundle) and runs from there.
SOURCE_PATH = "/opt/ktrain/code-src"

# What every pod that runs the code does first (`sh -c NODE_SCRIPT ktrain-node SRC DIR N PIP...`):
# $1: the ConfigMap mount ("" without --code), $2: the writable code directory, $3: how many
# arguments follow, all pip's. The kubelet lays a ConfigMap volume out as `..data/` (a link to the
# current payload) plus top-level links into it: copying `..data/.` copies each file once, with its
# mode, with busybox's cp as with GNU's. The line it prints leaves out index URLs, which may hold
# credentials (pip redacts them in its own output). It holds no single quote: the wrapper keeps it
# in a single-quoted variable, to run it here and, for MPI, on every host through mpirun.
NODE_SCRIPT = """\
set -e
src=$1 dst=$2
shift 3
if [ -n "$src" ]; then
  if [ -d "$src/..data" ]; then src=$src/..data; fi
  cp -R "$src/." "$dst/"
fi
if [ "$#" -gt 0 ]; then
  shown= skip=
  for a do
    if [ -n "$skip" ]; then
      skip=
    else
      case $a in
        --index-url | --extra-index-url) skip=1 ;;
        *) shown="$shown $a" ;;
      esac
    fi
  done
  printf "ktrain: pip install%s\\n" "$shown" >&2
  PY=$(command -v python3 || command -v python || true)
  if [ -z "$PY" ]; then
    echo "ktrain: --pip needs python3 or python in the image" >&2
    exit 127
  fi
  PIP_DISABLE_PIP_VERSION_CHECK=1 "$PY" -m pip install --quiet --no-warn-script-location "$@" ||
    PIP_DISABLE_PIP_VERSION_CHECK=1 "$PY" -m pip install --quiet --no-warn-script-location --user "$@"
fi
"""
NODE_NAME = "ktrain-node"  # $0 of the node script

# The one wrapper: a constant, whatever the job. $1, $2: as the node script's; $3: how many pip
# arguments there are; $4: how many words the fan-out command has (0 but on MPI); then the
# fan-out command, pip's arguments, the command. It runs the node script here, then (MPI) once on
# every host of the hostfile through the fan-out command (`mpirun ... --map-by ppr:1:node`), so
# the workers, which run sshd and not this wrapper, get the same writable copy and packages; it
# then changes into the copy and `exec`s the command. `node_run` builds each run's arguments by
# rotating "$@" (POSIX sh has no arrays): the fan-out words when asked, the node script and its
# fixed words, the pip arguments.
WRAPPER_SCRIPT = f"""\
set -e
node='{NODE_SCRIPT}'
src=$1 dst=$2 n=$3 f=$4
shift 4
node_run() {{
  everywhere=$1
  shift
  k=$#
  i=0
  for a do
    if [ "$i" -lt "$f" ] && [ "$everywhere" = 1 ]; then set -- "$@" "$a"; fi
    if [ "$i" -eq "$f" ]; then set -- "$@" sh -c "$node" {NODE_NAME} "$src" "$dst" "$n"; fi
    if [ "$i" -ge "$f" ] && [ "$i" -lt $((f + n)) ]; then set -- "$@" "$a"; fi
    i=$((i + 1))
  done
  shift "$k"
  "$@"
}}
node_run 0 "$@"
if [ "$f" -gt 0 ]; then
  node_run 1 "$@" || {{
    status=$?
    echo "ktrain: preparing the MPI hosts (the code, the packages) through $1 failed (exit $status)" >&2
    exit "$status"
  }}
fi
shift $((f + n))
if [ -n "$src" ]; then cd "$dst"; fi
exec "$@"
"""
# sh, -c, the script, $0, and the four fixed positional arguments.
_FIXED_WORDS = 8


def pip_arguments(packages: list[str], index_urls: list[str], requirements: list[str]) -> list[str]:
    """pip's arguments, as the SDK builds them: the first URL is the index, the others extra ones."""
    args: list[str] = []
    if index_urls:
        args += ["--index-url", index_urls[0]]
        for url in index_urls[1:]:
            args += ["--extra-index-url", url]
    for path in requirements:
        args += ["-r", path]
    return args + packages


def _literal(word: str) -> str:
    """`word` as the kubelet passes it on: it expands `$(VAR)` in command and args, and `$$` is `$`."""
    return word.replace("$", "$$")


def wrap(
    command: list[str],
    *,
    code_source: str | None,
    code_dir: str | None,
    pip_args: list[str],
    fan_out: list[str] | None = None,
) -> list[str]:
    """`sh -c SCRIPT ktrain-launch SRC DIR N F FAN_OUT... PIP_ARGS... COMMAND...`: the command's
    words stay words (no re-quoting), and no value is ever part of the script. `fan_out` (MPI):
    the command that runs a program once on every host (`mpi_fan_out`)."""
    if not command:
        raise UsageError("--code/--pip: the runtime's trainer has no command to run", hint="give one after `--`")
    fan_out = fan_out or []
    return [
        "sh",
        "-c",
        _literal(WRAPPER_SCRIPT),  # the kubelet would read `$(command -v ...)` as a variable
        WRAPPER_NAME,
        code_source or "",
        code_dir or "",
        str(len(pip_args)),
        str(len(fan_out)),
        *fan_out,
        *(_literal(a) for a in pip_args),
        *command,
    ]


def mpi_fan_out(hostfile: str) -> list[str]:
    """Open MPI's way to run a program once on each host of `hostfile` (Open MPI 4 and 5): what
    copies the code and installs the packages on an MPI job's workers."""
    return ["mpirun", "--hostfile", hostfile, "--map-by", "ppr:1:node"]


def is_wrapped(command: list[str] | None) -> bool:
    return command is not None and len(command) >= _FIXED_WORDS and command[0] == "sh" and command[3] == WRAPPER_NAME


def wrapper_words(command: list[str]) -> int:
    """How many leading words of a wrapped command are the wrapper's (the rest is the user's)."""
    if len(command) < _FIXED_WORDS:
        return _FIXED_WORDS
    pip, fan = command[6], command[7]
    return _FIXED_WORDS + sum(int(x) for x in (pip, fan) if x.isdigit())


def mount_patch(runtime_template: Obj, volume: Obj, mount_path: str, digest: str, *, fan_out: bool = False) -> Obj:
    """The runtime patch giving the code to every container of every replicated job but the
    initializers (the trainer, an MPI launcher and its workers), at `mount_path`. The wrapped
    trainer container (`node` of the trainer step) gets there a writable emptyDir, which the
    wrapper fills from the ConfigMap volume mounted at `SOURCE_PATH`; with `fan_out` (MPI) so do
    the `node` containers of the other steps (the workers, which the wrapper fills through
    mpirun). Any other container sees the ConfigMap volume itself, read-only."""
    workdir = {"name": WORKDIR_VOLUME, "emptyDir": {}}
    rjobs = []
    for rjob in (runtime_template.get("spec") or {}).get("replicatedJobs") or []:
        if not isinstance(rjob, dict) or not isinstance(rjob.get("name"), str):
            continue
        labels = ((rjob.get("template") or {}).get("metadata") or {}).get("labels") or {}
        if labels.get(c.LABEL_ANCESTOR) in INITIALIZER_ANCESTORS:
            continue
        trainer_step = labels.get(c.LABEL_ANCESTOR) == c.ANCESTOR_TRAINER
        pod = (((rjob.get("template") or {}).get("spec") or {}).get("template") or {}).get("spec") or {}
        containers = []
        wraps = False
        for ct in pod.get("containers") or []:
            if not (isinstance(ct, dict) and isinstance(ct.get("name"), str)):
                continue
            if ct["name"] == c.NODE and (trainer_step or fan_out):
                wraps = True
                mounts = [
                    {"name": volume["name"], "mountPath": SOURCE_PATH, "readOnly": True},
                    {"name": WORKDIR_VOLUME, "mountPath": mount_path},
                ]
            else:
                mounts = [{"name": volume["name"], "mountPath": mount_path, "readOnly": True}]
            containers.append({"name": ct["name"], "volumeMounts": mounts})
        if containers:
            volumes = [volume, workdir] if wraps else [volume]
            rjobs.append(
                {
                    "name": rjob["name"],
                    "template": {"spec": {"template": {"spec": {"volumes": volumes, "containers": containers}}}},
                }
            )
    if not rjobs:
        raise UsageError("--code: the runtime has no trainer pods to mount the code into")
    # The digest also lands on the JobSet (`job get` shows it), as patch annotations do (ENGINE.md §4.1).
    template = {"metadata": {"annotations": {CODE_ANNOTATION: digest}}, "spec": {"replicatedJobs": rjobs}}
    return {"manager": PATCH_MANAGER, "trainingRuntimeSpec": {"template": template}}
