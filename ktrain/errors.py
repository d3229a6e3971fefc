"""The ktrain exception tree and exit codes (httpie's status.py pattern).

Each error is also the built-in exception the Kubeflow SDK raises for the same kind of failure, so
code written against `kubeflow.trainer` keeps its `except` clauses when it moves to ktrain's Python
API (docs/python-api.md): bad input is a `ValueError` (a wrong type a `TypeError`), a failure on
the cluster or of the job a `RuntimeError`, a wait that gave up a `TimeoutError`. The CLI catches
`KtrainError` and does not care.
"""

from __future__ import annotations

import enum

from ktrain.util.structs import struct


class ExitCode(enum.IntEnum):
    OK = 0
    ERROR = 1
    USAGE = 2  # Click's convention
    INVALID = 3  # invalid input / validation failed
    NOT_FOUND = 4
    CLUSTER = 5
    TIMEOUT = 124  # `job wait` gave up, as timeout(1) does
    INTERRUPTED = 130


@struct(frozen=True)
class FieldError:
    """One validation problem, addressed by a Kubernetes-style field path."""

    path: str
    message: str
    # `kind` follows k8s field.ErrorType names: Invalid, Required, Forbidden, NotSupported, ...
    kind: str = "Invalid"

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


class KtrainError(Exception):
    exit_code: int = ExitCode.ERROR  # an ExitCode, or a local run's failing pod's code
    hint: str | None = None
    # Where in a YAML input the problem is, when it is about one (InputError always; others
    # such as a runtime name in a job file that names no runtime may carry it too).
    file: str | None = None
    line: int | None = None
    column: int | None = None
    source_line: str | None = None

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if hint is not None:
            self.hint = hint

    def __str__(self) -> str:
        return self.message

    def at(self, file: str | None, line: int | None, column: int | None, source_line: str | None) -> KtrainError:
        """This error, pointing at file:line:col."""
        self.file, self.line, self.column, self.source_line = file, line, column, source_line
        return self

    @property
    def location(self) -> str:
        parts = [self.file or "<input>"]
        if self.line is not None:
            parts.append(str(self.line))
            if self.column is not None:
                parts.append(str(self.column))
        return ":".join(parts)


class UsageError(KtrainError, ValueError):
    exit_code = ExitCode.USAGE


class ArgumentTypeError(UsageError, TypeError):
    """A Python API argument of the wrong type; the message names the argument."""


class NotProvidedError(KtrainError, NotImplementedError):
    """A Python API method a backend does not have (the Kubeflow SDK raises NotImplementedError)."""

    exit_code = ExitCode.USAGE


class NotFoundError(KtrainError, RuntimeError):
    exit_code = ExitCode.NOT_FOUND


class RuntimeNotFoundError(NotFoundError):
    pass


class InputError(KtrainError, ValueError):
    """A file we were given is malformed; carries file/line/col when known."""

    exit_code = ExitCode.INVALID

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        line: int | None = None,
        column: int | None = None,
        hint: str | None = None,
        source_line: str | None = None,
    ) -> None:
        super().__init__(message, hint=hint)
        self.file = file
        self.line = line
        self.column = column
        self.source_line = source_line


class CodeRefusedError(KtrainError):
    """`--code` will not send the tree: secrets, size, links, special files, names. One exit code
    for every such refusal (the files are the input, and they are not acceptable)."""

    exit_code = ExitCode.INVALID


@struct
class Located:
    """Where a field error points in a source file (filled in by the loader edge)."""

    file: str | None = None
    line: int | None = None
    column: int | None = None
    source_line: str | None = None


class ValidationFailedError(KtrainError, ValueError):
    """Every problem found in a job/runtime, reported together."""

    exit_code = ExitCode.INVALID

    def __init__(self, errors: list[FieldError], *, subject: str = "TrainJob") -> None:
        self.errors = list(errors)
        self.subject = subject
        self.locations: dict[int, Located] = {}
        super().__init__(self._summary())

    def _summary(self) -> str:
        if len(self.errors) == 1:
            return f"{self.subject} is invalid: {self.errors[0]}"
        return f"{self.subject} is invalid: [" + ", ".join(str(e) for e in self.errors) + "]"


class AlreadyReported(KtrainError):
    """A failure the command has already described on its own output (e.g. inside a JSON report):
    only the exit code is left to give."""

    exit_code = ExitCode.INVALID
    reported = True


class ClusterError(KtrainError, RuntimeError):
    exit_code = ExitCode.CLUSTER


class ClusterUnreachableError(ClusterError):
    pass


class ApiError(ClusterError):
    def __init__(
        self,
        message: str,
        *,
        status: int,
        reason: str = "",
        hint: str | None = None,
        causes: list[dict[str, str]] | None = None,
    ) -> None:
        super().__init__(message, hint=hint)
        self.status = status
        self.reason = reason
        self.causes = causes or []


class ConflictError(ApiError):
    pass


class InternalError(KtrainError):
    pass


class JobFailedError(KtrainError, RuntimeError):
    """A job reached a terminal state other than the one awaited (`job wait`)."""

    exit_code = ExitCode.ERROR

    def __init__(self, message: str, *, summary: object = None, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.summary = summary


class WaitTimeoutError(JobFailedError, TimeoutError):
    """A job did not reach the awaited state in time."""

    exit_code = ExitCode.TIMEOUT
