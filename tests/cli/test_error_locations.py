"""Errors about YAML inputs name file:line:col, show the line with a caret, and suggest a fix."""

from __future__ import annotations

from conftest import REPO

from ktrain.errors import ExitCode


def _caret_under(stderr: str, line_text: str, column: int) -> bool:
    return f"    {line_text}\n    {' ' * (column - 1)}^" in stderr


def test_unknown_runtime_in_a_job_file_points_at_the_name(cli, tmp_path) -> None:
    job = tmp_path / "job.yaml"
    job.write_text("kind: TrainJob\nspec:\n  runtimeRef:\n    name: torch-distributd\n")
    r = cli("render", "-f", str(job))
    assert r.exit_code == ExitCode.NOT_FOUND
    assert f"error: {job}:4:11: ClusterTrainingRuntime 'torch-distributd' not found" in r.stderr
    assert _caret_under(r.stderr, "    name: torch-distributd", 11)
    assert "hint: did you mean 'torch-distributed'?" in r.stderr


def test_duplicate_key_points_at_the_second_one(cli, tmp_path) -> None:
    job = tmp_path / "job.yaml"
    job.write_text(
        "kind: TrainJob\nspec:\n  runtimeRef: {name: torch-distributed}\n  trainer:\n    numNodes: 2\n    numNodes: 3\n"
    )
    r = cli("render", "-f", str(job))
    assert r.exit_code == ExitCode.INVALID
    assert f'{job}:6:5: invalid YAML: found duplicate key "numNodes"' in r.stderr
    assert _caret_under(r.stderr, "    numNodes: 3", 5)


def test_not_a_trainjob_points_at_kind(cli, tmp_path) -> None:
    job = tmp_path / "job.yaml"
    job.write_text("apiVersion: batch/v1\nkind: Job\n")
    r = cli("render", "-f", str(job))
    assert r.exit_code == ExitCode.INVALID and f"{job}:2:7: no TrainJob in this file" in r.stderr


def test_patch_file_typo_is_reported_in_the_patch_file(cli, tmp_path) -> None:
    patch = tmp_path / "patch.yaml"
    patch.write_text("manager: acme.io/tuning\ntrainingRuntimeSpec:\n  templat:\n    spec: {}\n")
    r = cli("render", "--runtime", "torch-distributed", "--patch", str(patch))
    assert r.exit_code == ExitCode.INVALID
    assert f'{patch}:3:3: invalid runtime patch: unknown field "trainingRuntimeSpec.templat"' in r.stderr
    assert "did you mean 'template'?" in r.stderr
    bare = tmp_path / "bare.yaml"
    bare.write_text("template:\n  metadata: {}\n  spc: {}\n")
    r = cli("render", "--runtime", "torch-distributed", "--patch", str(bare))
    assert f"{bare}:3:3:" in r.stderr and "did you mean 'spec'?" in r.stderr


def test_runtime_file_errors_point_into_the_runtime_file(cli, tmp_path) -> None:
    source = (REPO / "runtimes" / "torch-distributed.yaml").read_text()
    typo = tmp_path / "typo.yaml"
    typo.write_text(source.replace("numNodes: 1", "numNode: 1"))
    r = cli("render", "--runtime-file", str(typo), "--runtime", "torch-distributed")
    assert r.exit_code == ExitCode.INVALID
    line = source.splitlines().index("    numNodes: 1") + 1
    assert f"{typo}:{line}:5:" in r.stderr and "did you mean 'numNodes'?" in r.stderr
    # a rule of the runtime CRD (one ML policy only) is reported against the runtime, not the job
    two = tmp_path / "two.yaml"
    two.write_text(source.replace("    torch: {}", "    torch: {}\n    mpi: {}"))
    job = tmp_path / "job.yaml"
    job.write_text("kind: TrainJob\nspec:\n  runtimeRef: {name: torch-distributed}\n")
    r = cli("render", "-f", str(job), "--runtime-file", str(two))
    assert r.exit_code == ExitCode.INVALID
    assert "ClusterTrainingRuntime torch-distributed is invalid" in r.stderr
    assert f"{two}:" in r.stderr and f"{job}:" not in r.stderr


def test_wrong_type_in_a_list_item_names_the_item(cli, tmp_path) -> None:
    job = tmp_path / "job.yaml"
    job.write_text(
        "kind: TrainJob\nspec:\n  runtimeRef: {name: torch-distributed}\n  trainer:\n"
        "    env:\n      - name: LR\n        value: 0.1\n"
    )
    r = cli("render", "-f", str(job))
    assert r.exit_code == ExitCode.INVALID
    assert f"{job}:7:16: invalid TrainJob: spec.trainer.env[0].value: must be a string" in r.stderr


def test_engine_rules_on_a_patch_file_point_into_that_file(cli, tmp_path) -> None:
    """Errors the engine finds in a --patch file's patch (not the schema's) are located in that file,
    after the job file's own patches, for full and bare patch documents, render and validate alike."""
    full = tmp_path / "full.yaml"
    full.write_text(
        "manager: acme.io/x\ntrainingRuntimeSpec:\n  template:\n    spec:\n      replicatedJobs:\n"
        "      - name: node\n        templat: {}\n"
    )
    bare = tmp_path / "bare.yaml"
    bare.write_text("template:\n  spec:\n    replicatedJobs:\n    - name: node\n      templat: {}\n")
    job = tmp_path / "job.yaml"
    job.write_text(
        "kind: TrainJob\nspec:\n  runtimeRef: {name: torch-distributed}\n  runtimePatches:\n"
        "  - manager: acme.io/own\n    trainingRuntimeSpec:\n      template:\n        spec:\n"
        "          replicatedJobs:\n          - name: node\n            templat: {}\n"
    )
    for command in ("render", "validate"):
        r = cli("job", command, "--runtime", "torch-distributed", "--patch", str(full), "--patch", str(bare))
        assert r.exit_code == ExitCode.INVALID
        # an unknown field is pointed at by its key
        assert f"{full}:7:9: spec.runtimePatches[0]." in r.stderr and _caret_under(r.stderr, "        templat: {}", 9)
        assert f"{bare}:5:7: spec.runtimePatches[1]." in r.stderr
        r = cli("job", command, "-f", str(job), "--patch", str(full))
        assert f"{job}:11:13: spec.runtimePatches[0]." in r.stderr
        assert f"{full}:7:9: spec.runtimePatches[1]." in r.stderr, r.stderr
