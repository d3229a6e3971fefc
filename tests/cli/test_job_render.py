"""`ktrain job render` through the CLI: what a user sees on stdout, stderr and the exit code."""

from __future__ import annotations

import subprocess
import sys

import yaml

from ktrain.errors import ExitCode


def _docs(text: str) -> list[dict]:
    return [d for d in yaml.safe_load_all(text) if d]


def test_render_torch_from_flags_sets_nodes_command_and_pet_env(cli) -> None:
    r = cli(
        "job", "render", "--runtime", "torch-distributed", "--nodes", "4", "--", "torchrun", "train.py", "--epochs", "3"
    )
    assert r.exit_code == 0, r.stderr
    (jobset,) = _docs(r.stdout)
    rjob = jobset["spec"]["replicatedJobs"][0]
    assert rjob["template"]["spec"]["parallelism"] == 4
    node = rjob["template"]["spec"]["template"]["spec"]["containers"][0]
    assert node["command"] == ["torchrun", "train.py", "--epochs", "3"]
    env = {e["name"]: e.get("value") for e in node["env"]}
    assert env["PET_NNODES"] == "4"
    assert env["PET_MASTER_ADDR"] == f"{jobset['metadata']['name']}-node-0-0.{jobset['metadata']['name']}"
    assert "ownerReferences" not in jobset["metadata"]  # no uid, no owner


def test_render_derived_name_is_stable_and_fits_jobset_limits(cli) -> None:
    a = cli("render", "--runtime", "torchtune-llama3.2-1b", "--", "tune", "run")
    b = cli("render", "--runtime", "torchtune-llama3.2-1b", "--", "tune", "run")
    assert a.exit_code == 0, a.stderr
    name = _docs(a.stdout)[0]["metadata"]["name"]
    assert name == _docs(b.stdout)[0]["metadata"]["name"]
    assert len(name) <= 33  # dataset-initializer leaves 33 characters (ENGINE.md §16 item 12)


def test_unknown_runtime_names_the_closest_match(cli) -> None:
    r = cli("job", "render", "--runtime", "torch-distributd")
    assert r.exit_code == ExitCode.NOT_FOUND
    assert "torch-distributed" in r.stderr and "did you mean" in r.stderr
    assert "Traceback" not in r.stderr


def test_typo_in_job_file_points_at_line_and_suggests_field(cli, tmp_path) -> None:
    job = tmp_path / "job.yaml"
    job.write_text(
        "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata:\n  name: j\n"
        "spec:\n  runtimeRef:\n    name: torch-distributed\n  trainer:\n    numNode: 4\n"
    )
    r = cli("job", "render", "-f", str(job))
    assert r.exit_code == ExitCode.INVALID
    assert f"{job}:9:5" in r.stderr
    assert "did you mean 'numNodes'" in r.stderr
    assert "    numNode: 4" in r.stderr and "^" in r.stderr


def test_malformed_yaml_reports_file_line_column(cli, tmp_path) -> None:
    job = tmp_path / "bad.yaml"
    job.write_text("kind: TrainJob\nspec: [unclosed\n")
    r = cli("job", "render", "-f", str(job))
    assert r.exit_code == ExitCode.INVALID
    assert f"{job}:" in r.stderr and "invalid YAML" in r.stderr


def test_wrong_type_is_reported_with_its_path(cli, tmp_path) -> None:
    job = tmp_path / "job.yaml"
    job.write_text(
        "kind: TrainJob\nmetadata: {name: j}\nspec:\n  runtimeRef: {name: torch-distributed}\n"
        "  trainer:\n    numNodes: four\n"
    )
    r = cli("job", "render", "-f", str(job))
    assert r.exit_code == ExitCode.INVALID
    assert "spec.trainer.numNodes: must be an integer" in r.stderr
    assert f"{job}:6:15" in r.stderr


def test_flag_without_value_is_a_usage_error(cli) -> None:
    r = cli("job", "render", "--runtime")
    assert r.exit_code == ExitCode.USAGE
    assert "Traceback" not in r.stderr


def test_mpi_render_warns_about_private_key_and_ssh_secret_emits_none(cli) -> None:
    r = cli("render", "--runtime", "deepspeed-distributed", "--nodes", "3", "--", "mpirun", "train.py")
    assert r.exit_code == 0, r.stderr
    kinds = [d["kind"] for d in _docs(r.stdout)]
    assert kinds == ["Secret", "ConfigMap", "JobSet"]
    assert "private key" in r.stderr
    r = cli("render", "--runtime", "deepspeed-distributed", "--ssh-secret", "shared-ssh", "--", "mpirun")
    docs = _docs(r.stdout)
    assert [d["kind"] for d in docs] == ["ConfigMap", "JobSet"]
    assert "PRIVATE KEY" not in r.stdout and "private key" not in r.stderr
    volumes = docs[1]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["volumes"]
    assert volumes[0]["secret"]["secretName"] == "shared-ssh"


def test_queue_label_and_annotation_reach_the_jobset_through_a_runtime_patch(cli, tmp_path) -> None:
    r = cli("render", "--runtime", "torch-distributed", "--label", "team=ml", "--annotation", "a=b", "--queue", "gpu")
    jobset = _docs(r.stdout)[0]
    assert jobset["metadata"]["labels"] == {"team": "ml"}
    assert jobset["metadata"]["annotations"] == {"a": "b", "scheduling.volcano.sh/queue-name": "gpu"}


def test_output_json_and_name(cli) -> None:
    r = cli("render", "--runtime", "deepspeed-distributed", "--name", "ds", "-o", "name")
    assert r.stdout.splitlines() == ["secret/ds-mpi-ssh-auth", "configmap/ds-mpi-hostfile", "jobset.jobset.x-k8s.io/ds"]
    r = cli("render", "--runtime", "torch-distributed", "--name", "t", "-o", "json")
    import json

    assert json.loads(r.stdout)["kind"] == "JobSet"


def test_output_reads_back_identically_under_yaml_1_1(cli) -> None:
    r = cli(
        "render",
        "--runtime",
        "torch-distributed",
        "--name",
        "t",
        "--env",
        "FLAG=on",
        "--env",
        "OCT=0777",
        "--env",
        "LR=1e-3",
        "--env",
        "T=12:30",
        "--env",
        "Y=y",
    )
    node = _docs(r.stdout)[0]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]
    env = {e["name"]: e.get("value") for e in node["env"]}
    assert env["FLAG"] == "on" and env["OCT"] == "0777" and env["LR"] == "1e-3" and env["T"] == "12:30"
    assert env["Y"] == "y"


def test_python_dash_m_entry_point_renders_without_a_cluster(tmp_path) -> None:
    env = {"KUBECONFIG": str(tmp_path / "missing"), "PATH": "/usr/bin:/bin"}
    out = subprocess.run(
        [sys.executable, "-m", "ktrain", "runtime", "list", "-o", "name"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    assert "clustertrainingruntime.trainer.kubeflow.org/torch-distributed" in out.stdout.splitlines()


FLUX_RUNTIME = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: flux-rt
spec:
  mlPolicy:
    numNodes: 2
    flux:
      numProcPerNode: 1
  template:
    spec:
      replicatedJobs:
        - name: node
          template:
            metadata:
              labels:
                trainer.kubeflow.org/trainjob-ancestor-step: trainer
            spec:
              template:
                spec:
                  containers:
                    - name: node
                      image: flux-app:1
"""


def test_flux_without_a_uid_is_a_usage_error_that_says_how_to_give_one(cli, tmp_path) -> None:
    """Found by the mutation fuzzer: a Flux job rendered from flags (no uid: the CURVE keys derive
    from it) exited 1 as if ktrain had failed; the input is what is missing."""
    runtime = tmp_path / "flux.yaml"
    runtime.write_text(FLUX_RUNTIME)
    base = ["job", "render", "--runtime-file", str(runtime), "-r", "flux-rt", "--nodes", "2"]
    r = cli(*base, "--", "lmp", "-in", "in.reaxc")
    assert r.exit_code == ExitCode.USAGE, r.stderr
    assert "derived from the TrainJob uid" in r.stderr and "--set metadata.uid=UUID" in r.stderr
    r = cli(*base, "--set", "metadata.uid=0b0e2c9a-1d1f-4c3e-9a77-5a0f6d3c2b10", "--", "lmp", "-in", "in.reaxc")
    assert r.exit_code == 0, r.stderr
    kinds = [d["kind"] for d in _docs(r.stdout)]
    assert kinds.count("Secret") == 1 and "JobSet" in kinds  # the CURVE Secret, from the uid given
