"""ktrain's errors (ktrain/errors.py): the exit code each kind of failure gives, the builtin exception a
Python caller may catch it as, where it points in a file, and how validation problems read."""

from __future__ import annotations

import pytest

from ktrain import errors
from ktrain.errors import ExitCode, FieldError, InputError, KtrainError, ValidationFailedError


def test_the_exit_codes_scripts_rely_on() -> None:
    assert [int(c) for c in (ExitCode.OK, ExitCode.ERROR, ExitCode.USAGE, ExitCode.INVALID)] == [0, 1, 2, 3]
    assert [int(c) for c in (ExitCode.NOT_FOUND, ExitCode.CLUSTER, ExitCode.TIMEOUT, ExitCode.INTERRUPTED)] == [
        4,
        5,
        124,
        130,
    ]


@pytest.mark.parametrize(
    ("error", "code", "builtin"),
    [
        (errors.UsageError("u"), ExitCode.USAGE, ValueError),
        (errors.ArgumentTypeError("t"), ExitCode.USAGE, TypeError),
        (errors.NotProvidedError("n"), ExitCode.USAGE, NotImplementedError),
        (errors.RuntimeNotFoundError("r"), ExitCode.NOT_FOUND, RuntimeError),
        (InputError("i"), ExitCode.INVALID, ValueError),
        (errors.CodeRefusedError("c"), ExitCode.INVALID, Exception),
        (ValidationFailedError([FieldError("a", "b")]), ExitCode.INVALID, ValueError),
        (errors.ClusterUnreachableError("c"), ExitCode.CLUSTER, RuntimeError),
        (errors.ConflictError("c", status=409), ExitCode.CLUSTER, RuntimeError),
        (errors.JobFailedError("j"), ExitCode.ERROR, RuntimeError),
        (errors.WaitTimeoutError("w"), ExitCode.TIMEOUT, TimeoutError),
    ],
)
def test_each_error_gives_its_exit_code_and_is_the_builtin_python_expects(
    error: KtrainError, code: ExitCode, builtin: type[Exception]
) -> None:
    assert isinstance(error, KtrainError) and isinstance(error, builtin)
    assert error.exit_code == code


def test_the_message_is_the_text_and_a_hint_rides_along() -> None:
    error = KtrainError("no runtime named x", hint="run `ktrain runtime list`")
    assert str(error) == error.message == "no runtime named x"
    assert error.hint == "run `ktrain runtime list`"
    assert KtrainError("m").hint is None


def test_the_location_is_file_line_column_as_far_as_known() -> None:
    assert InputError("bad", file="job.yaml", line=3, column=7).location == "job.yaml:3:7"
    assert InputError("bad", file="job.yaml", line=3).location == "job.yaml:3"
    assert InputError("bad", file="job.yaml", column=7).location == "job.yaml"  # a column needs its line
    assert InputError("bad").location == "<input>"
    error = KtrainError("runtime x not found")
    assert error.at("job.yaml", 6, 11, "    name: x") is error
    assert (error.location, error.source_line) == ("job.yaml:6:11", "    name: x")


def test_a_field_error_reads_path_colon_message() -> None:
    assert str(FieldError("spec.trainer.numNodes", "Invalid value: -1")) == "spec.trainer.numNodes: Invalid value: -1"
    assert str(FieldError("", "TrainJob has no spec")) == "TrainJob has no spec"
    assert FieldError("a", "b").kind == "Invalid"


def test_validation_failed_names_its_subject_and_every_problem() -> None:
    one = ValidationFailedError([FieldError("spec.x", "Required value")])
    assert str(one) == "TrainJob is invalid: spec.x: Required value"
    two = ValidationFailedError([FieldError("a", "b"), FieldError("c", "d")], subject="TrainingRuntime rt")
    assert str(two) == "TrainingRuntime rt is invalid: [a: b, c: d]"
    assert two.errors == [FieldError("a", "b"), FieldError("c", "d")] and two.locations == {}


def test_an_api_error_keeps_the_servers_status_reason_and_causes() -> None:
    error = errors.ApiError("forbidden", status=403, reason="Forbidden")
    assert (error.status, error.reason, error.causes) == (403, "Forbidden", [])
    causes = [{"field": "spec", "message": "m"}]
    assert errors.ConflictError("exists", status=409, causes=causes).causes == causes


def test_a_failed_wait_carries_the_jobs_summary() -> None:
    summary = {"name": "j", "phase": "Failed"}
    error = errors.WaitTimeoutError("gave up", summary=summary, hint="raise --timeout")
    assert error.summary is summary and error.hint == "raise --timeout"
    assert errors.AlreadyReported("x").reported is True
