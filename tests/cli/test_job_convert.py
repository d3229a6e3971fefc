"""`ktrain job convert`, and v1 files given to `job render|validate -f` (issue #14)."""

from __future__ import annotations

import json

import yaml

from ktrain.errors import ExitCode

TFJOB = """\
apiVersion: kubeflow.org/v1
kind: TFJob
metadata:
  name: mnist
  namespace: ml
spec:
  runPolicy:
    ttlSecondsAfterFinished: 60
  tfReplicaSpecs:
    Worker:
      replicas: 2
      restartPolicy: OnFailure
      template:
        spec:
          containers:
          - name: tensorflow
            image: tf:2
            command: [python, mnist.py]
"""


def test_convert_prints_the_trainjob_and_a_report_table(cli, tmp_path) -> None:
    path = tmp_path / "tf.yaml"
    path.write_text(TFJOB)
    r = cli("job", "convert", "-f", str(path))
    assert r.exit_code == 0, r.stderr
    (job,) = list(yaml.safe_load_all(r.stdout))
    assert job["kind"] == "TrainJob" and job["metadata"] == {"name": "mnist", "namespace": "ml"}
    assert job["spec"]["runtimeRef"] == {"name": "tensorflow-distributed"}
    assert job["spec"]["trainer"] == {"numNodes": 2, "image": "tf:2", "args": ["python", "mnist.py"]}
    lines = r.stderr.splitlines()
    assert lines[0] == "TFJob ml/mnist -> TrainJob mnist on runtime tensorflow-distributed"
    assert lines[1].split() == ["V1", "FIELD", "STATUS", "V2", "NOTE"]
    ttl = next(line for line in lines if line.startswith("spec.runPolicy.ttlSecondsAfterFinished"))
    assert " dropped " in ttl and "ktrain job delete" in ttl


def test_convert_json_for_scripts(cli, tmp_path) -> None:
    path = tmp_path / "tf.yaml"
    path.write_text(TFJOB)
    r = cli("job", "convert", "-f", str(path), "-o", "json")
    assert r.exit_code == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["kind"] == "List" and [o["kind"] for o in out["items"]] == ["TrainJob"]
    (report,) = json.loads(r.stderr)
    assert report["kind"] == "TFJob" and report["runtime"] == {
        "kind": "ClusterTrainingRuntime",
        "name": "tensorflow-distributed",
        "generated": False,
    }
    statuses = {f["field"]: f["status"] for f in report["fields"]}
    assert statuses["spec.runPolicy.ttlSecondsAfterFinished"] == "dropped"


def test_convert_reads_a_list_from_stdin_and_generates_runtimes_where_needed(cli) -> None:
    second = yaml.safe_load(TFJOB)
    second["metadata"]["name"] = "ps"
    second["spec"]["tfReplicaSpecs"]["PS"] = second["spec"]["tfReplicaSpecs"]["Worker"]
    listing = {"apiVersion": "v1", "kind": "List", "items": [yaml.safe_load(TFJOB), second]}
    r = cli("job", "convert", "-f", "-", "--report", "none", stdin=yaml.safe_dump(listing))
    assert r.exit_code == 0, r.stderr
    assert r.stderr == ""
    docs = list(yaml.safe_load_all(r.stdout))
    assert [(d["kind"], d["metadata"]["name"]) for d in docs] == [
        ("TrainJob", "mnist"),
        ("TrainJob", "ps"),
        ("TrainingRuntime", "ps-v1"),
    ]


def test_round_trip_convert_then_render_equals_render_of_the_v1_file(cli, tmp_path) -> None:
    path = tmp_path / "tf.yaml"
    path.write_text(TFJOB.replace("      restartPolicy: OnFailure\n", "      restartPolicy: Never\n"))
    direct = cli("job", "render", "-f", str(path))
    assert direct.exit_code == 0, direct.stderr
    assert direct.stderr.startswith("note: converted TFJob mnist to a TrainJob on a TrainingRuntime mnist-v1")
    converted = cli("job", "convert", "-f", str(path), "--report", "none")
    again = cli("job", "render", "-f", "-", stdin=converted.stdout)
    assert again.exit_code == 0, again.stderr
    assert again.stdout == direct.stdout


def test_validate_a_v1_file(cli, tmp_path) -> None:
    path = tmp_path / "tf.yaml"
    path.write_text(TFJOB)
    r = cli("job", "validate", "-f", str(path))
    assert r.exit_code == 0, r.stderr
    assert r.stdout == "trainjob.trainer.kubeflow.org/mnist valid\n"
    assert "note: converted TFJob mnist to a TrainJob on runtime tensorflow-distributed" in r.stderr


def test_unknown_kind_exits_3_with_the_supported_kinds(cli, tmp_path) -> None:
    path = tmp_path / "x.yaml"
    path.write_text("apiVersion: kubeflow.org/v1\nkind: CaffeJob\nmetadata: {name: x}\nspec: {}\n")
    for command in (("job", "convert"), ("job", "render")):
        r = cli(*command, "-f", str(path))
        assert r.exit_code == ExitCode.INVALID, r.stderr
        assert f"{path}:2:7" in r.stderr and "MXJob (kubeflow.org/v1)" in r.stderr
        assert "Traceback" not in r.stderr


def test_wrong_type_exits_3_at_file_line_col(cli, tmp_path) -> None:
    path = tmp_path / "tf.yaml"
    path.write_text(TFJOB.replace("replicas: 2", "replicas: [2]"))
    r = cli("job", "render", "-f", str(path))
    assert r.exit_code == ExitCode.INVALID
    assert f"{path}:11:17" in r.stderr and "must be an integer" in r.stderr


def test_convert_a_trainjob_says_there_is_nothing_to_do(cli, tmp_path) -> None:
    path = tmp_path / "tj.yaml"
    path.write_text("apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: a}\n")
    r = cli("job", "convert", "-f", str(path))
    assert r.exit_code == ExitCode.INVALID and "already a TrainJob" in r.stderr


def test_convert_onto_an_existing_runtime(cli, tmp_path) -> None:
    path = tmp_path / "tf.yaml"
    path.write_text(TFJOB)
    r = cli("job", "convert", "-f", str(path), "--runtime", "my-tf", "--report", "json")
    assert r.exit_code == 0, r.stderr
    (job,) = list(yaml.safe_load_all(r.stdout))
    assert job["spec"]["runtimeRef"] == {"name": "my-tf"}


def test_explain_names_the_v1_source(cli, tmp_path) -> None:
    path = tmp_path / "tf.yaml"
    path.write_text(TFJOB)
    r = cli("job", "render", "--explain", "-f", str(path))
    assert r.exit_code == 0, r.stderr
    assert "image: tf:2  # converted from TFJob .spec.tfReplicaSpecs.Worker" in r.stdout
    generated = tmp_path / "never.yaml"
    generated.write_text(TFJOB.replace("restartPolicy: OnFailure", "restartPolicy: Never"))
    r = cli("job", "render", "--explain", "-f", str(generated))
    assert "restartPolicy: Never  # converted from TFJob (generated runtime mnist-v1)" in r.stdout


def test_other_documents_are_kept_with_a_note(cli, tmp_path) -> None:
    path = tmp_path / "with-pvc.yaml"
    path.write_text("apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data}\n---\n" + TFJOB)
    r = cli("job", "convert", "-f", str(path), "--report", "none")
    assert r.exit_code == 0, r.stderr
    assert [d["kind"] for d in yaml.safe_load_all(r.stdout)] == ["PersistentVolumeClaim", "TrainJob"]
    assert f"note: {path}:1: document 1 (PersistentVolumeClaim data) is not a v1 job: kept as it is" in r.stderr


def test_list_items_that_are_not_jobs_are_named(cli) -> None:
    listing = {
        "apiVersion": "v1",
        "kind": "List",
        "items": [{"apiVersion": "v1", "kind": "Service"}, yaml.safe_load(TFJOB)],
    }
    r = cli("job", "convert", "-f", "-", "--report", "none", stdin=yaml.safe_dump(listing))
    assert r.exit_code == 0, r.stderr
    assert "List item 1 (Service) is not a v1 job: left out" in r.stderr


def test_a_long_v1_name_gives_a_valid_runtime_name() -> None:
    from ktrain.convert import convert_documents
    from ktrain.inputs.documents import load_documents

    name = "a" * 59 + "-bcd"
    text = TFJOB.replace("name: mnist", f"name: {name}").replace("restartPolicy: OnFailure", "restartPolicy: Never")
    (conv,) = convert_documents(load_documents(text, "x.yaml"))
    assert conv.runtime_name == "a" * 59 + "-v1" and len(conv.runtime_name) <= 63
