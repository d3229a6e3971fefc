"""The controller's feature gates as `--feature-gates`, `$KTRAIN_FEATURE_GATES` and the KRM function
read them (component-base's syntax and messages), and what the TrainJobStatus gate changes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from ktrain.errors import UsageError
from ktrain.inputs.feature_gates import merged_gates, parse_feature_gates, parse_status_server

JOB = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: demo, namespace: team}
spec:
  runtimeRef: {name: torch-distributed}
  trainer: {command: [python, train.py]}
"""


@pytest.mark.parametrize(
    ("text", "gates"),
    [
        ("", {}),
        ("TrainJobStatus=true", {"TrainJobStatus": True}),
        (" TrainJobStatus = false ,", {"TrainJobStatus": False}),
        ("TrainJobStatus=T", {"TrainJobStatus": True}),
        ("AllAlpha=true", {"TrainJobStatus": True}),
        ("AllAlpha=true,TrainJobStatus=false", {"TrainJobStatus": False}),
        ("AllBeta=true", {}),
    ],
)
def test_gates_parse_as_the_controller_parses_them(text: str, gates: dict[str, bool]) -> None:
    assert parse_feature_gates(text) == gates


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("Nope=true", "unrecognized feature gate: Nope"),
        ("TrainJobStatus", "missing bool value for TrainJobStatus"),
        ("TrainJobStatus=yes", 'invalid value of TrainJobStatus=yes, err: strconv.ParseBool: parsing "yes"'),
        ("x" * 5000, "longer than 4096"),
    ],
)
def test_bad_gates_are_refused_with_the_controllers_message(text: str, message: str) -> None:
    with pytest.raises(UsageError, match=r"^--feature-gates: ") as err:
        parse_feature_gates(text)
    assert message in str(err.value)


def test_the_flag_wins_over_the_environment_gate_by_gate() -> None:
    assert merged_gates("TrainJobStatus=true", "TrainJobStatus=false") == {"TrainJobStatus": False}
    assert merged_gates("TrainJobStatus=true", None) == {"TrainJobStatus": True}


@pytest.mark.parametrize(
    ("text", "where"),
    [
        (None, ("kubeflow-trainer-controller-manager", "kubeflow-system", 10443)),
        ("svc.ops:8443", ("svc", "ops", 8443)),
        ("svc.ops.svc", ("svc", "ops", 10443)),
        (":9443", ("kubeflow-trainer-controller-manager", "kubeflow-system", 9443)),
    ],
)
def test_status_server_defaults_are_the_controller_configuration_defaults(
    text: str | None, where: tuple[str, str, int]
) -> None:
    server = parse_status_server(text)
    assert (server.service, server.namespace, server.port) == where


@pytest.mark.parametrize("text", ["svc:80", "svc.ops:0", "svc.ops:99999", "Bad_Name.ops:1", "svc.o/ps:1"])
def test_bad_status_servers_are_refused(text: str) -> None:
    with pytest.raises(UsageError, match=r"^--status-server: "):
        parse_status_server(text)


def _env(objects: list[dict[str, Any]]) -> dict[str, str]:
    jobset = next(o for o in objects if o["kind"] == "JobSet")
    container = jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]
    return {e["name"]: e.get("value", "") for e in container["env"]}


def test_gate_off_renders_exactly_what_no_gate_renders(cli: Any, tmp_path: Path) -> None:
    (tmp_path / "job.yaml").write_text(JOB)
    plain = cli("job", "render", "-f", str(tmp_path / "job.yaml"))
    off = cli("job", "render", "-f", str(tmp_path / "job.yaml"), "--feature-gates", "TrainJobStatus=false")
    assert plain.exit_code == off.exit_code == 0
    assert plain.stdout == off.stdout and "KUBEFLOW_TRAINER" not in off.stdout and off.stderr == ""


def test_the_environment_turns_the_gate_on_and_the_note_says_what_an_offline_render_cannot_know(
    cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "job.yaml").write_text(JOB)
    monkeypatch.setenv("KTRAIN_FEATURE_GATES", "TrainJobStatus=true")
    monkeypatch.setenv("KTRAIN_STATUS_SERVER", "trainer.ops:8443")
    result = cli("job", "render", "-f", str(tmp_path / "job.yaml"))
    assert result.exit_code == 0, result.stderr
    objects = [d for d in yaml.safe_load_all(result.stdout) if d]
    assert [o["kind"] for o in objects] == ["ConfigMap", "JobSet"]
    assert objects[0]["metadata"]["name"] == "demo-tls-config" and objects[0]["data"] == {"ca.crt": ""}
    env = _env(objects)
    assert env["KUBEFLOW_TRAINER_SERVER_URL"] == (
        "https://trainer.ops.svc:8443/apis/trainer.kubeflow.org/v1alpha1/namespaces/team/trainjobs/demo/status"
    )
    assert result.stderr.count("note: TrainJobStatus:") == 1 and "only the cluster knows" in result.stderr


def test_validate_takes_the_gate_too(cli: Any, tmp_path: Path) -> None:
    (tmp_path / "job.yaml").write_text(JOB)
    ok = cli("job", "validate", "-f", str(tmp_path / "job.yaml"), "--feature-gates", "TrainJobStatus=true")
    bad = cli("job", "validate", "-f", str(tmp_path / "job.yaml"), "--feature-gates", "Other=true")
    assert ok.exit_code == 0, ok.stderr
    assert bad.exit_code != 0 and "unrecognized feature gate: Other" in bad.stderr and "Traceback" not in bad.stderr


def test_explain_credits_the_gated_fields_to_the_trainjobstatus_plugin(cli: Any, tmp_path: Path) -> None:
    (tmp_path / "job.yaml").write_text(JOB)
    result = cli(
        "job", "render", "-f", str(tmp_path / "job.yaml"), "--feature-gates", "TrainJobStatus=true", "--explain"
    )
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    url = next(line for line in lines if "name: KUBEFLOW_TRAINER_SERVER_URL" in line)
    assert url.endswith("# TrainJobStatus plugin (feature gate)")
    assert next(line for line in lines if "name: PET_NNODES" in line).endswith("# torch plugin (ML policy)")
