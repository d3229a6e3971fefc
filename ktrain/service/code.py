"""`--code` and `--pip`: the files mounted through a runtime patch and the trainer command wrapped."""

from __future__ import annotations

from ktrain.errors import UsageError
from ktrain.inputs.registry import RuntimeEntry
from ktrain.service.overrides import ensure
from ktrain.service.requests import RenderRequest
from ktrain.service.runtimes import is_torchtune_runtime

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"

if TYPE_CHECKING:
    from ktrain.api.runtime import TrainingRuntime
    from ktrain.util.jsondata import Obj


def _runtime_trainer_command(runtime: TrainingRuntime) -> list[str]:
    from ktrain.api.base import runtime_trainer_container

    command = runtime_trainer_container(runtime.spec.template.spec or {}).get("command")
    return [str(w) for w in command] if isinstance(command, list) else []


def apply_code(data: Obj, request: RenderRequest, entry: RuntimeEntry) -> Obj:
    """`--code` mounts the files through a runtime patch; `--code`/`--pip` wrap the trainer
    command (authoring/code_launch.py). The same TrainJob serves both targets."""
    from ktrain.authoring import code_launch
    from ktrain.inputs import code_bundle

    ov = request.overrides
    runtime = entry.runtime
    spec = data["spec"]
    trainer = spec.get("trainer") if isinstance(spec.get("trainer"), dict) else None
    command = trainer.get("command") if trainer else None
    if command == ["tune", "run"] or (command is None and is_torchtune_runtime(runtime)):
        raise UsageError(
            "--code/--pip cannot wrap `tune run`: torchtune recipes run from the image",
            hint="use a torch runtime for your own training code",
        )
    mpi = runtime.spec.ml_policy.mpi if runtime.spec.ml_policy is not None else None
    # MPI: the workers run sshd, not the wrapper; the launcher's wrapper copies the code and
    # installs the packages on every host through Open MPI's mpirun (`--map-by ppr:1:node`).
    fan_out = mpi is not None and mpi.mpi_implementation in ("OpenMPI", "")
    if (ov.pip or ov.requirements) and mpi is not None and not fan_out:
        raise UsageError(
            f"--pip on an {mpi.mpi_implementation} runtime would install on the launcher only: its workers "
            "start sshd, and ktrain reaches every host only through Open MPI's mpirun",
            hint="install the packages in the image (--code works on MPI runtimes)",
        )
    if command is None:
        command = _runtime_trainer_command(runtime)
    trainer = ensure(spec, "trainer")
    if ov.code and request.code_bundle is None:
        request.code_bundle = code_bundle.collect(ov.code, ov.code_include)
    if request.code_bundle is not None:
        maps = code_bundle.config_maps(request.code_bundle, data["metadata"]["name"], data["metadata"]["namespace"])
        volume = code_bundle.volume(request.code_bundle, maps)
        template: Obj = {"spec": dict(runtime.spec.template.spec or {})}
        digest = request.code_bundle.digest()
        size = request.code_bundle.size
        note = (
            f"--code: {len(request.code_bundle.files)} files, {size / 1024:.1f} KiB in {len(maps)} ConfigMap"
            f"{'s' if len(maps) > 1 else ''} ({maps[0]['metadata']['name']}{', ...' if len(maps) > 1 else ''}), "
            f"mounted at {code_bundle.MOUNT_PATH}"
        )
        if note not in request.notes:
            request.notes.append(note)
        patch = code_launch.mount_patch(template, volume, code_bundle.MOUNT_PATH, digest, fan_out=fan_out)
        spec.setdefault("runtimePatches", []).append(patch)
        data["metadata"].setdefault("annotations", {})[code_launch.CODE_ANNOTATION] = digest
    command = [str(w) for w in command]
    if ov.code and request.code_bundle is not None:  # the user's own command (ktrain.train makes its own)
        from ktrain.authoring.code_command import check_script

        check_script(command, [f.path for f in request.code_bundle.files], code_bundle.MOUNT_PATH)
    packages, requirements = _packages(ov.pip, ov.requirements)
    shipped = request.code_bundle is not None
    trainer["command"] = code_launch.wrap(
        command,
        code_source=code_launch.SOURCE_PATH if shipped else None,
        code_dir=code_bundle.MOUNT_PATH if shipped else None,
        pip_args=code_launch.pip_arguments(packages, list(ov.pip_index_urls), _landed(requirements, request)),
        fan_out=code_launch.mpi_fan_out(MPI_HOSTFILE) if fan_out and (shipped or packages or requirements) else None,
    )
    return data


def _packages(pip: list[str], requirements: list[str]) -> tuple[list[str], list[str]]:
    """`--pip` values: package specifiers, or `-r FILE` / `--requirement FILE` (as pip writes a
    requirement file); any other leading `-` would be an option to pip, not a package."""
    packages: list[str] = []
    files = list(requirements)
    for value in pip:
        if not value.startswith("-"):
            packages.append(value)
            continue
        for prefix in ("--requirement=", "--requirement ", "-r=", "-r ", "-r"):
            if value.startswith(prefix) and value[len(prefix) :].strip():
                files.append(value[len(prefix) :].strip())
                break
        else:
            raise UsageError(
                f"--pip {value!r}: not a package (pip would read an option)",
                hint="give packages, `--pip '-r FILE'` or --requirements FILE; indexes with --pip-index-url",
            )
    return packages, files


def _landed(requirements: list[str], request: RenderRequest) -> list[str]:
    """Where each requirement file lands in the code directory: it must be among the files sent."""
    if not requirements:
        return []
    if request.code_bundle is None or not request.overrides.code:
        raise UsageError(
            f"--requirements {requirements[0]}: the file must be sent with the code",
            hint="add --code . (or --code DIR holding it)",
        )
    out = []
    for path in requirements:
        landed = request.code_bundle.landing(path)
        if landed is None:
            raise UsageError(
                f"--requirements {path}: not among the files --code sends",
                hint="give its path from the current directory (--code proj --requirements proj/requirements.txt); "
                "is an ignore rule leaving it out?",
            )
        out.append(landed)
    return out


def code_objects(request: RenderRequest, job_name: str, namespace: str) -> list[Obj]:
    """The code ConfigMaps of `--code` (empty without it): they go with the job's objects."""
    if request.code_bundle is None:
        return []
    from ktrain.inputs import code_bundle

    return code_bundle.config_maps(request.code_bundle, job_name, namespace)


MPI_HOSTFILE = "/etc/mpi/hostfile"  # where the Trainer's MPI plugin mounts the hostfile


def launcher_command(runtime: TrainingRuntime, entry_file: str, *, single_process: bool = False) -> list[str]:
    """How the Python API's function file runs on `runtime`, as the Kubeflow SDK's CustomTrainer
    runs it (`get_runtime_trainer`: torchrun for torch, mpirun for MPI, python otherwise).
    `single_process`: one MPI rank on the launcher (`mpirun -np 1`, no hostfile), as the SDK's
    `get_runtime_packages` runs its probe."""
    if is_torchtune_runtime(runtime):
        raise UsageError(
            f"a function cannot run on {runtime.name}: a torchtune runtime runs its own recipe",
            hint="fine-tune with BuiltinTrainer(config=TorchTuneConfig(...)), or run the function on a torch runtime",
        )
    policy = runtime.spec.ml_policy
    if policy is not None and policy.torch is not None:
        return ["torchrun", entry_file]
    if policy is not None and policy.mpi is not None:
        if single_process:
            return ["mpirun", "-np", "1", "python3", entry_file]
        return ["mpirun", "--hostfile", MPI_HOSTFILE, "python3", entry_file]
    return ["python3", entry_file]
