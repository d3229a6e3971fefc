"""Job templates, values files and `--set`: what a data scientist types, and the errors they get."""

from __future__ import annotations

import yaml

from ktrain.errors import ExitCode

TEMPLATE = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: {{ name }}
spec:
  runtimeRef:
    name: torch-distributed
  trainer:
    numNodes: {{ nodes }}
    command: [torchrun, train.py, --lr, "{{ optim.lr }}"]
    env:
      - name: LR
        value: "{{ optim.lr }}"
"""


def _jobset(text: str) -> dict:
    return [d for d in yaml.safe_load_all(text) if d][-1]


def _node(jobset: dict) -> dict:
    return jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]


def test_template_with_values_file_and_set(cli, tmp_path) -> None:
    (tmp_path / "job.yaml.j2").write_text(TEMPLATE)
    (tmp_path / "values.yaml").write_text("name: demo\nnodes: 2\noptim:\n  lr: 1e-3\n")
    r = cli(
        "job",
        "render",
        "-f",
        str(tmp_path / "job.yaml.j2"),
        "--values",
        str(tmp_path / "values.yaml"),
        "--set",
        "optim.lr=3e-4",
        "--set",
        "trainer.numNodes=8",
    )
    assert r.exit_code == 0, r.stderr
    jobset = _jobset(r.stdout)
    assert jobset["metadata"]["name"] == "demo"
    assert jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["parallelism"] == 8  # job path wins
    node = _node(jobset)
    assert node["command"] == ["torchrun", "train.py", "--lr", "3e-4"]  # text kept as written
    assert {"name": "LR", "value": "3e-4"} in node["env"]


def test_later_values_files_win_and_merge_deeply(cli, tmp_path) -> None:
    (tmp_path / "job.yaml.j2").write_text(TEMPLATE)
    (tmp_path / "base.yaml").write_text("name: base\nnodes: 1\noptim:\n  lr: 1e-3\n")
    (tmp_path / "big.yaml").write_text("nodes: 4\n")
    r = cli(
        "render",
        "-f",
        str(tmp_path / "job.yaml.j2"),
        "--values",
        str(tmp_path / "base.yaml"),
        "--values",
        str(tmp_path / "big.yaml"),
    )
    assert r.exit_code == 0, r.stderr
    jobset = _jobset(r.stdout)
    assert jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["parallelism"] == 4
    assert {"name": "LR", "value": "1e-3"} in _node(jobset)["env"]


def test_undefined_variable_names_variable_line_and_suggests(cli, tmp_path) -> None:
    (tmp_path / "job.yaml.j2").write_text(TEMPLATE)
    r = cli("render", "-f", str(tmp_path / "job.yaml.j2"), "--set", "name=x", "--set", "node=2")
    assert r.exit_code == ExitCode.INVALID
    assert f"{tmp_path / 'job.yaml.j2'}:9:18: undefined template variable 'nodes'" in r.stderr
    assert "    numNodes: {{ nodes }}" in r.stderr
    assert "did you mean 'node'?" in r.stderr and "Traceback" not in r.stderr


def test_missing_attribute_of_a_value_points_at_the_line(cli, tmp_path) -> None:
    (tmp_path / "job.yaml.j2").write_text(TEMPLATE)
    r = cli("render", "-f", str(tmp_path / "job.yaml.j2"), "--set", "name=x", "--set", "nodes=2", "--set", "optim.x=1")
    assert r.exit_code == ExitCode.INVALID
    assert f"{tmp_path / 'job.yaml.j2'}:10:" in r.stderr and "no attribute 'lr'" in r.stderr


def test_template_syntax_error_points_at_the_line(cli, tmp_path) -> None:
    path = tmp_path / "job.yaml"
    path.write_text("kind: TrainJob\nspec:\n  trainer:\n    numNodes: {{ nodes\n")
    r = cli("render", "-f", str(path))
    assert r.exit_code == ExitCode.INVALID
    assert f"{path}:" in r.stderr and "template syntax error" in r.stderr


def test_templates_cannot_read_files_or_escape_the_sandbox(cli, tmp_path) -> None:
    path = tmp_path / "job.yaml.j2"
    path.write_text("{% include '/etc/passwd' %}\n")
    r = cli("render", "-f", str(path))
    assert r.exit_code == ExitCode.INVALID and "cannot include" in r.stderr
    path.write_text("kind: TrainJob\nmetadata:\n  name: {{ ''.__class__.__mro__ }}\n")
    r = cli("render", "-f", str(path))
    assert r.exit_code == ExitCode.INVALID and "sandbox" in r.stderr and f"{path}:3" in r.stderr
    # the environment is not visible either
    path.write_text("kind: TrainJob\nmetadata:\n  name: {{ environ }}\n")
    r = cli("render", "-f", str(path))
    assert "undefined template variable 'environ'" in r.stderr


def test_values_file_errors_point_at_the_key(cli, tmp_path) -> None:
    (tmp_path / "job.yaml.j2").write_text(TEMPLATE)
    values = tmp_path / "values.yaml"
    values.write_text("name: x\nlearning-rate: 1\n")
    r = cli("render", "-f", str(tmp_path / "job.yaml.j2"), "--values", str(values))
    assert r.exit_code == ExitCode.INVALID
    assert f"{values}:2:1" in r.stderr and "'learning_rate'" in r.stderr
    values.write_text("name: x\nname: y\n")
    r = cli("render", "-f", str(tmp_path / "job.yaml.j2"), "--values", str(values))
    assert r.exit_code == ExitCode.INVALID and f"{values}:2:" in r.stderr and "duplicate key" in r.stderr
    values.write_text("- a\n")
    r = cli("render", "-f", str(tmp_path / "job.yaml.j2"), "--values", str(values))
    assert r.exit_code == ExitCode.INVALID and f"{values}:1:1" in r.stderr and "mapping" in r.stderr


def test_values_or_template_keys_on_a_plain_file_are_errors(cli, tmp_path) -> None:
    job = tmp_path / "job.yaml"
    job.write_text("kind: TrainJob\nspec:\n  runtimeRef: {name: torch-distributed}\n")
    values = tmp_path / "values.yaml"
    values.write_text("lr: 1\n")
    r = cli("render", "-f", str(job), "--values", str(values))
    assert r.exit_code == ExitCode.USAGE and "--values needs a job template" in r.stderr
    r = cli("render", "-f", str(job), "--set", "trainr.numNodes=2")
    assert r.exit_code == ExitCode.INVALID
    assert "'trainr' is not a TrainJob field" in r.stderr and "did you mean 'trainer'?" in r.stderr


def test_set_on_a_plain_file_sets_fields_by_path(cli, tmp_path) -> None:
    job = tmp_path / "job.yaml"
    job.write_text(
        "kind: TrainJob\nmetadata: {name: j}\nspec:\n  runtimeRef: {name: torch-distributed}\n"
        "  trainer:\n    env:\n      - {name: LR, value: '1'}\n      - {name: WD, value: '0'}\n"
    )
    r = cli(
        "render",
        "-f",
        str(job),
        "--set",
        "trainer.env[name=LR].value=3e-4",
        "--set",
        "trainer.env[1].value=5",
        "--set",
        "trainer.env[name=NEW].value=x",
        "--set",
        "spec.trainer.command=[python, t.py]",
        "--set",
        'metadata.labels["app.kubernetes.io/name"]=demo',
        "--set",
        "trainer.resourcesPerNode.limits.cpu=2",
    )
    assert r.exit_code == 0, r.stderr
    node = _node(_jobset(r.stdout))
    env = {e["name"]: e.get("value") for e in node["env"]}
    assert env["LR"] == "3e-4" and env["WD"] == "5" and env["NEW"] == "x"
    assert node["command"] == ["python", "t.py"]
    assert node["resources"]["limits"]["cpu"] == "2"


def test_set_type_errors_point_into_the_argument(cli) -> None:
    r = cli("render", "--runtime", "torch-distributed", "--set", "trainer.numNodes=abc")
    assert r.exit_code == ExitCode.INVALID
    assert "--set: spec.trainer.numNodes must be an integer, got 'abc'" in r.stderr
    assert "    trainer.numNodes=abc\n" + " " * 21 + "^" in r.stderr
    r = cli("render", "--runtime", "torch-distributed", "--set", "trainer.numNode=2")
    assert "did you mean 'numNodes'?" in r.stderr and "    trainer.numNode=2\n" + " " * 12 + "^" in r.stderr
    r = cli("render", "--runtime", "torch-distributed", "--set", "suspend=yes")
    assert "must be true or false" in r.stderr
    r = cli("render", "--runtime", "torch-distributed", "--set", "trainer.env[4].value=1")
    assert "index 4 is out of range" in r.stderr
    r = cli("render", "--runtime", "torch-distributed", "--set", "trainer.numNodes")
    assert r.exit_code == ExitCode.INVALID and "PATH=VALUE" in r.stderr


def test_set_alone_can_name_the_runtime(cli) -> None:
    r = cli("render", "--set", "runtimeRef.name=torch-distributed", "--set", "trainer.numNodes=3", "-o", "json")
    assert r.exit_code == 0, r.stderr
    import json

    assert json.loads(r.stdout)["spec"]["replicatedJobs"][0]["template"]["spec"]["parallelism"] == 3


def test_template_from_stdin_is_detected_by_its_braces(cli) -> None:
    r = cli("render", "-f", "-", "--set", "name=s", "--set", "nodes=1", "--set", "optim.lr=1", stdin=TEMPLATE)
    assert r.exit_code == 0, r.stderr
    assert _jobset(r.stdout)["metadata"]["name"] == "s"


def test_errors_in_the_rendered_yaml_say_when_lines_moved(cli, tmp_path) -> None:
    same = tmp_path / "same.yaml.j2"
    same.write_text(
        "kind: TrainJob\nspec:\n  runtimeRef: {name: torch-distributed}\n  trainer:\n    numNodes: {{ n }}\n"
    )
    r = cli("render", "-f", str(same), "--set", "n=x")
    assert f"{same}:5:15: invalid TrainJob: spec.trainer.numNodes: must be an integer" in r.stderr
    moved = tmp_path / "moved.yaml.j2"
    moved.write_text(
        "kind: TrainJob\nspec:\n{% for i in range(3) %}\n  # {{ i }}\n{% endfor %}\n"
        "  runtimeRef: {name: torch-distributed}\n  trainer:\n    numNodes: {{ n }}\n"
    )
    r = cli("render", "-f", str(moved), "--set", "n=x")
    assert f"{moved} (rendered):" in r.stderr and "    numNodes: x" in r.stderr
