"""The `--set` path grammar and its type checks against the TrainJob model (its records table)."""

from __future__ import annotations

import pytest
from hostile_input import no_traceback

from ktrain.authoring.set_paths import (
    apply_assignment,
    is_job_path,
    parse_assignment,
    template_value,
)
from ktrain.errors import ExitCode, InputError
from unit.authoring.rendered import _jobset, _node


def test_parse_fields_indexes_selectors_and_quoted_keys() -> None:
    a = parse_assignment("trainer.env[name=LR].value=a=b")
    assert a.parts == ("trainer", "env", ("name", "LR"), "value") and a.value == "a=b"
    a = parse_assignment('metadata.labels["a.b/c"]=x')
    assert a.parts == ("metadata", "labels", "a.b/c")
    a = parse_assignment(r"metadata.labels.a\.b=x")
    assert a.parts == ("metadata", "labels", "a.b")
    assert parse_assignment("trainer.command[1]=x").parts == ("trainer", "command", 1)


def test_job_paths_are_trainjob_or_spec_fields() -> None:
    assert is_job_path(parse_assignment("trainer.numNodes=1").parts)
    assert is_job_path(parse_assignment("spec.suspend=true").parts)
    assert is_job_path(parse_assignment("metadata.name=x").parts)
    assert not is_job_path(parse_assignment("lr=1").parts)


def test_apply_converts_by_declared_type() -> None:
    data: dict = {}
    for text in (
        "trainer.numNodes=4",
        "suspend=true",
        "trainer.image=img:1",
        "trainer.args=[--x, '1']",
        "activeDeadlineSeconds=60",
    ):
        apply_assignment(data, parse_assignment(text), "TrainJob")
    assert data == {
        "spec": {
            "trainer": {"numNodes": 4, "image": "img:1", "args": ["--x", "1"]},
            "suspend": True,
            "activeDeadlineSeconds": 60,
        }
    }


@pytest.mark.parametrize(
    "text,needle",
    [
        ("trainer.numNodes=4.5", "must be an integer"),
        ("kind=Job", "must be one of TrainJob"),
        ("trainer.numNodes.x=1", "is not a mapping"),
        ("trainer[0]=1", "is not a list"),
        ("trainer.args={a: 1}", "must be a list"),
    ],
)
def test_apply_rejects_wrong_types(text: str, needle: str) -> None:
    with pytest.raises(InputError) as err:
        apply_assignment({}, parse_assignment(text), "TrainJob")
    assert needle in err.value.message


def test_template_values_keep_text_but_type_integers_and_booleans() -> None:
    assert template_value(parse_assignment("optim.lr=3e-4")) == (("optim", "lr"), "3e-4")
    assert template_value(parse_assignment("n=8")) == (("n",), 8)
    assert template_value(parse_assignment("debug=true")) == (("debug",), True)


# --- bounds on --set (issue #12) -----------------------------------------------------------------


def test_set_path_with_too_many_parts_is_an_error(cli) -> None:
    r = cli("render", "--runtime", "torch-distributed", "--set", "a." * 5000 + "b=1")
    assert r.exit_code == ExitCode.INVALID and "more than 100 parts" in r.stderr
    no_traceback(r.stderr)


def test_set_integer_longer_than_64_bits_is_an_error(cli) -> None:
    r = cli("render", "--runtime", "torch-distributed", "--set", "trainer.numNodes=" + "9" * 5000)
    assert r.exit_code == ExitCode.INVALID and "must be an integer of at most 64 bits" in r.stderr
    no_traceback(r.stderr)


# -- through `job render` (from tests/cli/test_templates.py) --


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
