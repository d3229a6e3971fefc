"""What the tests of hostile and broken input files (issue #12) share: a small TrainJob, the same one
not UTF-8, the FIFO skip, and the check that an error is no crash."""

from __future__ import annotations

import os

import pytest

JOB = (
    "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata:\n  name: x\n"
    "spec:\n  runtimeRef:\n    name: torch-distributed\n"
)
NOT_UTF8 = JOB.encode() + b"  trainer:\n    image: caf\xe9:1\n"

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")


def no_traceback(stderr: str) -> None:
    assert "Traceback" not in stderr and "internal error" not in stderr, stderr
