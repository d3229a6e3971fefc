"""Job templates, values files and `--set` (`ktrain.authoring.templating`): what a data scientist types,
and the errors they get."""

from __future__ import annotations

import pytest

from ktrain.authoring.templating import (
    NOT_A_TEMPLATE,
    is_template,
    load_values,
    marked_plain,
    render_template,
    rendered_label,
    unused_values,
)
from ktrain.errors import ExitCode, InputError
from unit.authoring.rendered import _jobset, _node

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


# -- the module's functions, without the CLI --


def test_a_file_is_a_template_by_its_suffix_or_its_braces_unless_its_first_line_says_not() -> None:
    assert is_template("job.yaml.j2", "kind: TrainJob\n")
    assert is_template(None, "name: {{ name }}\n") and is_template("job.yaml", "{% if x %}{% endif %}\n")
    assert not is_template("job.yaml", "kind: TrainJob\n")
    marked = marked_plain("cmd: 'echo {{ x }}'\n")
    assert marked.splitlines()[0] == NOT_A_TEMPLATE + " (its {{ and {% are text)"
    assert not is_template("job.yaml", marked) and not is_template(None, "\ufeff" + marked)
    assert marked_plain("kind: TrainJob\n") == "kind: TrainJob\n"  # nothing to mark


def test_values_files_merge_in_order_and_floats_print_as_written() -> None:
    values = load_values(
        [("base.yaml", "optim: {lr: 1e-3, wd: 0.10}\nnodes: 1\n"), ("big.yaml", "nodes: 4\noptim: {wd: 1_0.5}\n")]
    )
    assert values["nodes"] == 4 and values["optim"]["lr"] == 0.001
    assert str(values["optim"]["lr"]) == "1e-3"  # not 0.001
    assert str(values["optim"]["wd"]) == "1_0.5" and values["optim"]["wd"] == 10.5
    assert render_template("lr={{ optim.lr }} small={{ optim.lr < 0.01 }}\n", "t.j2", values) == "lr=1e-3 small=True\n"
    assert load_values([("empty.yaml", "")]) == {}


def test_a_bad_values_file_is_an_error_at_its_line() -> None:
    with pytest.raises(InputError, match="'learning-rate' is not a template variable name") as err:
        load_values([("v.yaml", "lr: 1\nlearning-rate: 2\n")])
    assert (err.value.file, err.value.line, err.value.hint) == ("v.yaml", 2, "rename it, e.g. 'learning_rate'")
    with pytest.raises(InputError, match="one YAML document") as err:
        load_values([("v.yaml", "a: 1\n---\nb: 2\n")])
    assert err.value.line == 3
    with pytest.raises(InputError, match="must be a mapping"):
        load_values([("v.yaml", "[1, 2]\n")])
    with pytest.raises(InputError) as err:
        load_values([("v.yaml", "2x: 1\n")])
    assert err.value.hint == "rename it, e.g. '_2x'"


def test_render_errors_name_the_file_line_and_column() -> None:
    with pytest.raises(InputError, match="undefined template variable 'nodes'") as err:
        render_template("kind: TrainJob\nnumNodes: {{ nodes }}\n", "job.j2", {"node": 1})
    assert (err.value.file, err.value.line, err.value.column) == ("job.j2", 2, 14)
    assert err.value.hint == "did you mean 'node'? pass it with --set nodes=VALUE or in a --values file"
    with pytest.raises(InputError, match="template syntax error") as err:
        render_template("a: 1\nb: {{ x\n", "job.j2", {})
    assert err.value.line == 2
    with pytest.raises(InputError, match="ZeroDivisionError") as err:
        render_template("a: 1\nb: {{ 1 // x }}\n", "job.j2", {"x": 0})
    assert err.value.line == 2
    with pytest.raises(InputError, match="cannot include or import other files"):
        render_template("{% import 'x.j2' as x %}\n", "job.j2", {})


def test_unused_set_values_are_named_with_the_closest_variable() -> None:
    text = "name: {{ name }}\nnodes: {{ num_nodes }}\n"
    assert unused_values(text, "job.j2", ["name", "num_node", "zzz", "num_node"]) == [
        "--set num_node: job.j2 uses no template variable 'num_node', the value is ignored (did you mean 'num_nodes'?)",
        "--set zzz: job.j2 uses no template variable 'zzz', the value is ignored",
    ]
    assert unused_values("{{ broken", "job.j2", ["x"]) == []  # the render reports the syntax error


def test_the_rendered_label_says_when_lines_no_longer_match_the_template() -> None:
    assert rendered_label("job.j2", "a\n{{ b }}\n", "a\nB\n") == "job.j2"
    assert rendered_label("job.j2", "{% for i in x %}\n{{ i }}\n{% endfor %}\n", "1\n2\n3\n4\n") == "job.j2 (rendered)"
