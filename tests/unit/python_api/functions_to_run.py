"""Functions that tests of the Python API run as the Kubeflow SDK runs one, `func(**func_args)`: their
source travels to the (local) pods, so they live in a module of their own."""

from __future__ import annotations


def train_fn(lr, epochs=1, fail=False):  # type: ignore[no-untyped-def]
    import os

    print("lr", lr, "epochs", epochs, "rank", os.environ.get("RANK"))  # noqa: T201 - runs in the pod
    if fail:
        raise SystemExit(7)


def record(**kwargs):  # type: ignore[no-untyped-def]
    print(repr(kwargs))  # noqa: T201 - runs in the pod
