"""`ktrain job validate`: offline, schema first then the engine's rules, every problem at once."""

from __future__ import annotations

from conftest import REPO

from ktrain.errors import ExitCode

GOOD = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: good
spec:
  runtimeRef:
    name: torch-distributed
  trainer:
    numNodes: 2
"""


def test_valid_job_prints_valid_and_exits_zero(cli, tmp_path) -> None:
    (tmp_path / "job.yaml").write_text(GOOD)
    r = cli("job", "validate", "-f", str(tmp_path / "job.yaml"))
    assert r.exit_code == 0, r.stderr
    assert r.stdout == "trainjob.trainer.kubeflow.org/good valid\n"


def test_every_schema_problem_is_reported_at_once_with_positions(cli, tmp_path) -> None:
    job = tmp_path / "job.yaml"
    job.write_text(
        GOOD.replace("    numNodes: 2\n", '    numNode: 4\n    numProcPerNode: "8"\n    env:\n      - value: x\n')
    )
    r = cli("job", "validate", "-f", str(job))
    assert r.exit_code == ExitCode.INVALID
    assert "(3 problems)" in r.stderr
    assert f"{job}:9:5: spec.trainer.numNode: unknown field 'numNode' (did you mean 'numNodes'?)" in r.stderr
    assert f"{job}:10:21: spec.trainer.numProcPerNode: must be an integer, got str '8'" in r.stderr
    assert "spec.trainer.env[0].name: is required" in r.stderr
    assert r.stdout == ""


def test_engine_rules_run_after_the_schema(cli, tmp_path) -> None:
    job = tmp_path / "job.yaml"
    job.write_text(GOOD + "    env:\n      - name: PET_NNODES\n        value: '1'\n")
    r = cli("job", "validate", "-f", str(job))
    assert r.exit_code == ExitCode.INVALID
    assert "reserved envs" in r.stderr and f"{job}:11:" in r.stderr


def test_validate_takes_the_same_inputs_as_render(cli, tmp_path) -> None:
    (tmp_path / "job.yaml.j2").write_text(GOOD.replace("numNodes: 2", "numNodes: {{ nodes }}"))
    r = cli("job", "validate", "-f", str(tmp_path / "job.yaml.j2"), "--set", "nodes=3")
    assert r.exit_code == 0, r.stderr
    r = cli("job", "validate", "-f", str(tmp_path / "job.yaml.j2"), "--set", "nodes=three")
    assert r.exit_code == ExitCode.INVALID and "must be an integer, got str 'three'" in r.stderr
    r = cli("job", "validate", "--runtime", "torch-distributed", "--env", "PET_NNODES=1")
    assert r.exit_code == ExitCode.INVALID and "reserved envs" in r.stderr


def test_validate_checks_the_runtime_too(cli, tmp_path) -> None:
    runtime = (REPO / "runtimes" / "torch-distributed.yaml").read_text().replace("torch: {}", "torch: {}\n    mpi: {}")
    (tmp_path / "rt.yaml").write_text(runtime)
    (tmp_path / "job.yaml").write_text(GOOD)
    r = cli("job", "validate", "-f", str(tmp_path / "job.yaml"), "--runtime-file", str(tmp_path / "rt.yaml"))
    assert r.exit_code == ExitCode.INVALID, r.stdout
    assert "mlPolicy" in r.stderr
