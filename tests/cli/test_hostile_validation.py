"""Hostile and broken input, the validation half of issue #12: every problem is a KtrainError with
the API server's words (at file:line:col where YAML is involved), exit 3 for invalid input, no
traceback, never "internal error", and no unbounded work."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
MPI_CASE = REPO / "tests" / "golden" / "cases" / "mpi" / "launcher-count-from-policy"

JOB_HEAD = """apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: a}
"""
LABEL_MSG = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-'"
SUBDOMAIN_MSG = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.'"


def _clean(result) -> None:  # type: ignore[no-untyped-def]
    assert "internal error" not in result.stderr
    assert "Traceback" not in result.stderr


def _write(tmp_path: Path, text: str, name: str = "job.yaml") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


# --- item 2: names and namespaces -----------------------------------------------------------


def test_namespace_flag_must_be_a_dns1123_label(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("job", "render", "-r", "torch-distributed", "-n", "ümlaut", "--", "python", "x")
    assert result.exit_code == 3, result.stderr
    assert 'metadata.namespace: Invalid value: "ümlaut": ' + LABEL_MSG in result.stderr
    _clean(result)


def test_namespace_in_the_file_is_refused_at_its_position(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    text = JOB_HEAD.replace("{name: a}", '{name: a, namespace: "../../etc/passwd"}') + (
        "spec:\n  runtimeRef: {name: torch-distributed}\n"
    )
    job = _write(tmp_path, text)
    for verb in ("render", "validate"):
        result = cli("job", verb, "-f", job)
        assert result.exit_code == 3, result.stderr
        assert f"{job}:3:" in result.stderr and LABEL_MSG in result.stderr
        _clean(result)


def test_ssh_secret_must_be_a_dns1123_subdomain(cli) -> None:  # type: ignore[no-untyped-def]
    for verb in ("render", "validate"):
        result = cli("job", verb, "-r", "deepspeed-distributed", "--ssh-secret", "..", "--", "python", "x")
        assert result.exit_code == 3, result.stderr
        assert "--ssh-secret" in result.stderr and SUBDOMAIN_MSG in result.stderr
        _clean(result)


def test_dataset_secret_must_be_a_dns1123_subdomain(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("job", "render", "-r", "torchtune-llama3.2-1b", "--dataset-secret", "bad-")
    assert result.exit_code == 3, result.stderr
    assert 'spec.initializer.dataset.secretRef.name: Invalid value: "bad-": ' + SUBDOMAIN_MSG in result.stderr
    _clean(result)


def test_runtime_name_and_namespace_are_checked(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    runtime = (
        (MPI_CASE / "runtime.yaml")
        .read_text()
        .replace("{name: mpi, namespace: default}", "{name: mpi, namespace: Bad_NS}")
    )
    path = _write(tmp_path, runtime, "runtime.yaml")
    result = cli("job", "render", "-f", str(MPI_CASE / "trainjob.yaml"), "--runtime-file", path)
    assert result.exit_code == 3, result.stderr
    assert LABEL_MSG in result.stderr
    _clean(result)


# --- item 3: --debug only before -- ---------------------------------------------------------


def test_debug_after_double_dash_belongs_to_the_training_command(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("job", "render", "--runtime", "nope", "--", "python", "train.py", "--debug")
    assert result.exit_code == 4, result.stderr
    _clean(result)


# --- item 5: wrong types where the records or the merge do not expect them ------------------

WRONG_TYPES = {
    "spec-scalar": (JOB_HEAD + "spec: abc\n", None, ("job.yaml:4:7", '"string": spec in body must be of type object')),
    "trainer-scalar": (
        JOB_HEAD + "spec:\n  runtimeRef: {name: torch-distributed}\n  trainer: abc\n",
        None,
        ("job.yaml:6:12", "spec.trainer"),
    ),
    "metadata-int": (
        JOB_HEAD.replace("metadata: {name: a}", "metadata: 5") + "spec:\n  runtimeRef: {name: torch-distributed}\n",
        None,
        ("job.yaml:3:11", '"integer": metadata in body must be of type object'),
    ),
    "patch-replicatedjobs-int": (
        JOB_HEAD + "spec:\n  runtimeRef: {name: torch-distributed}\n  runtimePatches:\n  - manager: a.io/b\n"
        "    trainingRuntimeSpec: {template: {spec: {replicatedJobs: 5}}}\n",
        None,
        ("job.yaml:8:", "replicatedJobs in body must be of type array"),
    ),
    "patch-name-map": (
        JOB_HEAD + "spec:\n  runtimeRef: {name: torch-distributed}\n  runtimePatches:\n  - manager: a.io/b\n"
        "    trainingRuntimeSpec: {template: {spec: {replicatedJobs: [{name: {a: 1}}]}}}\n",
        None,
        ("job.yaml:8:", "replicatedJobs[0].name in body must be of type string"),
    ),
    "runtime-template-int": (
        None,
        ("  template:\n    spec:\n      replicatedJobs:", "  template: 5\n  x:\n    spec:\n      replicatedJobs:"),
        ("runtime.yaml:", "spec.template in body must be of type object"),
    ),
    "runtime-env-scalar": (
        None,
        ("{name: node, image: m}", "{name: node, image: m, env: abc}"),
        ("runtime.yaml:26:", "containers[0].env in body must be of type array"),
    ),
    "runtime-env-null-item": (
        None,
        ("{name: node, image: m}", "{name: node, image: m, env: [null]}"),
        ("runtime.yaml:26:", "containers[0].env[0] in body must be of type object"),
    ),
    "runtime-quantity": (
        None,
        ("{name: node, image: m}", "{name: node, image: m, resources: {limits: {cpu: abc}}}"),
        ("runtime.yaml:26:", "quantities must match the regular expression"),
    ),
    "runtime-parallelism-string": (
        None,
        ("parallelism: 2", "parallelism: two"),
        ("runtime.yaml:22:", "parallelism in body must be of type integer"),
    ),
}


@pytest.mark.parametrize("case", sorted(WRONG_TYPES))
def test_wrongly_typed_fields_are_refused_at_their_position(cli, tmp_path: Path, case: str) -> None:  # type: ignore[no-untyped-def]
    job_text, runtime_edit, wanted = WRONG_TYPES[case]
    job = _write(tmp_path, job_text) if job_text else _write(tmp_path, (MPI_CASE / "trainjob.yaml").read_text())
    runtime_text = (MPI_CASE / "runtime.yaml").read_text()
    args = ["-f", job]
    if runtime_edit is not None:
        assert runtime_edit[0] in runtime_text
        args += [
            "--runtime-file",
            _write(tmp_path, runtime_text.replace(runtime_edit[0], runtime_edit[1], 1), "runtime.yaml"),
        ]
    for verb in ("render", "validate"):
        result = cli("job", verb, *args)
        assert result.exit_code == 3, result.stderr
        for text in wanted:
            assert text in result.stderr, result.stderr
        _clean(result)


def test_null_fields_in_a_runtime_template_are_pruned(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    runtime = (
        (MPI_CASE / "runtime.yaml").read_text().replace("{name: node, image: m}", "{name: node, image: m, env: null}")
    )
    path = _write(tmp_path, runtime, "runtime.yaml")
    result = cli("job", "render", "-f", str(MPI_CASE / "trainjob.yaml"), "--runtime-file", path)
    assert result.exit_code == 0, result.stderr


# --- item 11: node counts stay bounded -------------------------------------------------------


def test_mpi_node_count_beyond_the_configmap_limit_is_refused_before_building(cli) -> None:  # type: ignore[no-untyped-def]
    start = time.monotonic()
    result = cli("job", "render", "-r", "deepspeed-distributed", "--nodes", "2147483647", "--name", "x", "--", "p")
    assert time.monotonic() - start < 5
    assert result.exit_code == 3, result.stderr
    assert "x-mpi-hostfile" in result.stderr and "may not be more than 1048576 bytes" in result.stderr
    _clean(result)


# --- item 12: int32/int64 ranges -------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value"),
    [("numNodes", 2**64), ("numProcPerNode", 2**64), ("numNodes", 2**31), ("numProcPerNode", -(2**31) - 1)],
)
def test_out_of_range_int32_fields_are_refused(cli, tmp_path: Path, field: str, value: int) -> None:  # type: ignore[no-untyped-def]
    job = _write(
        tmp_path, JOB_HEAD + f"spec:\n  runtimeRef: {{name: torch-distributed}}\n  trainer: {{{field}: {value}}}\n"
    )
    result = cli("job", "render", "-f", job)
    assert result.exit_code == 3, result.stderr
    if abs(value) >= 2**64:  # beyond any API integer: refused as the YAML is read (issue #12, items 4-16)
        assert "integers are at most 64 bits" in result.stderr
    else:
        assert f"spec.trainer.{field}: Invalid value: {value}: spec.trainer.{field} in body should be" in result.stderr
    assert f"{job}:6:" in result.stderr
    _clean(result)


def test_out_of_range_flags_are_refused(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("job", "render", "-r", "torch-distributed", "--nproc-per-node", str(2**64), "--", "p")
    assert result.exit_code == 3, result.stderr
    assert "spec.trainer.numProcPerNode in body should be less than or equal to 2147483647" in result.stderr
    _clean(result)


def test_out_of_range_runtime_fields_are_refused(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    runtime = (MPI_CASE / "runtime.yaml").read_text().replace("numNodes: 3", f"numNodes: {2**40}")
    path = _write(tmp_path, runtime, "runtime.yaml")
    result = cli("job", "render", "-f", str(MPI_CASE / "trainjob.yaml"), "--runtime-file", path)
    assert result.exit_code == 3, result.stderr
    assert "spec.mlPolicy.numNodes in body should be less than or equal to 2147483647" in result.stderr
    _clean(result)


def test_integers_too_long_to_print_are_still_reported(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from ktrain.engine.shapes import int_range_errors

    (error,) = int_range_errors("x", 10**6000, 32)
    assert "an integer of about 6001 digits" in error.message


# --- item 15: -o before any work -------------------------------------------------------------


def test_unknown_output_format_is_refused_before_rendering(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("job", "render", "-r", "deepspeed-distributed", "-o", "bogus", "--", "python", "x")
    assert result.exit_code == 2, result.stderr
    assert "unknown output format 'bogus'" in result.stderr
    assert "warning" not in result.stderr  # no render ran (it would warn about the fresh SSH key)
    _clean(result)


@pytest.mark.parametrize(
    "args", [["runtime", "show", "torch-distributed", "-o", "bogus"], ["runtime", "list", "-o", "x"]]
)
def test_runtime_views_refuse_unknown_output_formats(cli, args: list[str]) -> None:  # type: ignore[no-untyped-def]
    result = cli(*args)
    assert result.exit_code == 2, result.stderr
    assert "unknown output format" in result.stderr


@pytest.mark.parametrize("args", [["runtime", "list"], ["runtime", "list", "-o", "wide"], ["runtime", "show", "mpi"]])
def test_runtime_views_survive_a_malformed_runtime_template(cli, tmp_path: Path, args: list[str]) -> None:  # type: ignore[no-untyped-def]
    runtime = (
        (MPI_CASE / "runtime.yaml")
        .read_text()
        .replace("      replicatedJobs:\n", "      replicatedJobs: 5\n      x:\n", 1)
    )
    result = cli(*args, "--runtime-file", _write(tmp_path, runtime, "runtime.yaml"))
    assert result.exit_code == 0, result.stderr
    _clean(result)


def test_podgroup_min_member_beyond_int32_is_refused_by_validate(cli) -> None:  # type: ignore[no-untyped-def]
    case = REPO / "tests" / "golden" / "cases" / "coscheduling" / "trainjob-resources-numnodes-min-resources"
    args = ["-f", str(case / "trainjob.yaml"), "--runtime-file", str(case / "runtime.yaml"), "--nodes", "2147483647"]
    wanted = "spec.minMember: Invalid value: 2147483649: spec.minMember in body should be less than or equal to"
    rendered = cli("job", "render", *args)
    assert rendered.exit_code == 0 and "the API server will reject the PodGroup" in rendered.stderr
    validated = cli("job", "validate", *args)
    assert validated.exit_code == 3 and wanted in validated.stderr
    _clean(validated)


@pytest.mark.parametrize(
    ("value", "wanted"),
    [("9" * 5000, "5000 digits")],
)
def test_yaml_scalars_that_cannot_be_built_are_input_errors(cli, tmp_path: Path, value: str, wanted: str) -> None:  # type: ignore[no-untyped-def]
    job = _write(
        tmp_path, JOB_HEAD + f"spec:\n  runtimeRef: {{name: torch-distributed}}\n  trainer: {{image: {value}}}\n"
    )
    result = cli("job", "render", "-f", job)
    assert result.exit_code == 3, result.stderr
    assert f"{job}:6:20: invalid YAML: " in result.stderr and wanted in result.stderr
    _clean(result)


def test_a_timestamp_that_is_no_date_is_its_text_as_kubectl_reads_it(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    job = _write(
        tmp_path, JOB_HEAD + "spec:\n  runtimeRef: {name: torch-distributed}\n  trainer: {image: 2020-02-30}\n"
    )
    result = cli("job", "render", "-f", job)
    assert result.exit_code == 0, result.stderr
    assert "image: '2020-02-30'" in result.stdout or 'image: "2020-02-30"' in result.stdout


def test_long_values_are_not_echoed_whole_in_messages(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    runtime = (
        (MPI_CASE / "runtime.yaml")
        .read_text()
        .replace("{name: mpi, namespace: default}", "{name: " + "m" * 200_000 + "}")
    )
    path = _write(tmp_path, runtime, "runtime.yaml")
    result = cli("job", "render", "-r", "nope", "--runtime-file", path, "--", "p")
    assert result.exit_code == 4, result.stderr
    assert len(result.stderr) < 8 * 1024 and "more characters)" in result.stderr
    _clean(result)


def test_a_million_digit_cpu_quantity_stays_fast(cli) -> None:  # type: ignore[no-untyped-def]
    start = time.monotonic()
    result = cli("job", "render", "-r", "torch-distributed", "--cpu", "9" * 1_000_000, "-o", "name", "--", "p")
    assert time.monotonic() - start < 5  # converting it to an int took 34 s
    assert result.exit_code == 0, result.stderr[:500]
    _clean(result)


def test_quantity_values_beyond_int64_are_held_at_its_bounds() -> None:
    from ktrain.engine.quantity import Quantity

    assert Quantity.parse("1e999999").ceil_int() == 2**63 - 1
    assert Quantity.parse("-1e30").milli_value() == -(2**63)
    assert Quantity.parse("2500m").ceil_int() == 3 and Quantity.parse("2500m").milli_value() == 2500
