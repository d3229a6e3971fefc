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


# --------------------------------------------------------------------------- issue #26: scripts, Lists, checks

V1BETA1_LIST = {
    "apiVersion": "v1",
    "kind": "List",
    "items": [
        {"apiVersion": "kubeflow.org/v1beta1", "kind": "TFJob", "metadata": {"name": "old"}, "spec": {}},
        yaml.safe_load(TFJOB),
    ],
}


def test_json_report_alone_on_stderr_with_notes_and_failures(cli) -> None:
    """`-o json --report json`: stderr parses as the report (notes and failures are entries)."""
    text = yaml.safe_dump(V1BETA1_LIST) + "---\n42\n---\napiVersion: v1\nkind: Service\nmetadata: {name: s}\n"
    r = cli("job", "convert", "-f", "-", "-o", "json", "--report", "json", stdin=text)
    assert r.exit_code == ExitCode.INVALID
    report = json.loads(r.stderr)
    notes = [e["note"] for e in report if "note" in e]
    assert any("document 2 is a scalar" in n for n in notes)
    assert any("(Service s) is not a v1 job" in n for n in notes)
    failed = [e for e in report if e.get("error")]
    assert [(e["name"], e["converted"]) for e in failed] == [("old", False)]
    assert "unsupported apiVersion 'kubeflow.org/v1beta1'" in failed[0]["error"]
    (converted,) = [e for e in report if "fields" in e]
    assert converted["name"] == "mnist"
    out = json.loads(r.stdout)
    assert [o["kind"] for o in out["items"]] == ["TrainJob", "Service"]


def test_one_legacy_item_does_not_stop_the_list(cli) -> None:
    r = cli("job", "convert", "-f", "-", stdin=yaml.safe_dump(V1BETA1_LIST))
    assert r.exit_code == ExitCode.INVALID
    assert [d["metadata"]["name"] for d in yaml.safe_load_all(r.stdout)] == ["mnist"]
    assert "error: <stdin>:3:15: unsupported apiVersion" in r.stderr and "TFJob ml/mnist -> TrainJob mnist" in r.stderr


def test_convert_refuses_what_render_would_refuse(cli, tmp_path) -> None:
    """Numbers as args: the v1 API server refused them too (args are strings); convert now
    renders what it prints and says where."""
    path = tmp_path / "tf.yaml"
    numbers = "command: [python, mnist.py]\n            args: [1, 2]"
    path.write_text(TFJOB.replace("command: [python, mnist.py]", numbers))
    r = cli("job", "convert", "-f", str(path))
    assert r.exit_code == ExitCode.INVALID, r.stderr
    assert f"{path}:" in r.stderr and "args" in r.stderr
    assert r.stdout == ""


def test_render_says_which_documents_it_leaves_out(cli, tmp_path) -> None:
    path = tmp_path / "with-svc.yaml"
    path.write_text("apiVersion: v1\nkind: Service\nmetadata: {name: svc}\n---\n" + TFJOB)
    r = cli("job", "render", "-f", str(path))
    assert r.exit_code == 0, r.stderr
    assert f"warning: {path}:1: document 1 (Service svc) is not part of the job: left out" in r.stderr


def test_render_and_validate_name_allow_extensions_for_intel_mpi(cli, tmp_path) -> None:
    path = tmp_path / "intel.yaml"
    path.write_text(
        "apiVersion: kubeflow.org/v2beta1\nkind: MPIJob\nmetadata: {name: pi}\nspec:\n"
        "  mpiImplementation: Intel\n  mpiReplicaSpecs:\n"
        "    Launcher:\n      template: {spec: {containers: [{name: l, image: 'i:1', command: [mpirun]}]}}\n"
        "    Worker:\n      replicas: 2\n      template: {spec: {containers: [{name: w, image: 'i:1'}]}}\n"
    )
    for command in ("render", "validate"):
        r = cli("job", command, "-f", str(path))
        assert r.exit_code == ExitCode.INVALID
        assert "hint: Intel hostfiles are a ktrain extension" in r.stderr and "--allow-extensions" in r.stderr
    assert cli("job", "render", "-f", str(path), "--allow-extensions").exit_code == 0


def test_explain_credits_cpu_and_memory_of_one_template_alike(cli, tmp_path) -> None:
    """`memory: 4096Mi` is written `4Gi` by the JobSet builder: a spelling, not a source."""
    path = tmp_path / "res.yaml"
    path.write_text(
        TFJOB.replace("restartPolicy: OnFailure", "restartPolicy: Never").replace(
            "command: [python, mnist.py]",
            "command: [python, mnist.py]\n            resources: {limits: {cpu: '2', memory: 4096Mi}}",
        )
    )
    r = cli("job", "render", "--explain", "-f", str(path))
    assert r.exit_code == 0, r.stderr
    sources = {line.split(":")[0].strip(): line.split("#")[1].strip() for line in r.stdout.splitlines() if "#" in line}
    assert sources["cpu"] == sources["memory"] == "converted from TFJob (generated runtime mnist-v1)"


def test_a_queued_v1_job_is_created_suspended_for_kueue(cli, kube, tmp_path) -> None:
    """Kueue admits the JobSet it finds labelled and resumes it; `job create` leaves it suspended."""
    path = tmp_path / "q.yaml"
    path.write_text(TFJOB.replace("  namespace: ml\n", "  labels: {kueue.x-k8s.io/queue-name: team-q}\n"))
    r = cli("job", "create", *kube.args(), "-f", str(path))
    assert r.exit_code == 0, r.stderr
    (jobset,) = kube.srv.objects("jobsets", kube.namespace, "jobset.x-k8s.io")
    assert jobset["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "team-q"
    assert jobset["spec"]["suspend"] is True
