"""Shared fixtures: where ../shared is, and a CLI runner that captures stdout/stderr."""

from __future__ import annotations

import io
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
CASES = SHARED / "conformance" / "cases"
UPSTREAM = SHARED / "reference" / "upstream"


def need_shared() -> Path:
    if not SHARED.is_dir():
        pytest.skip("../shared is not present beside the repository")
    return SHARED


@pytest.fixture(autouse=True, scope="session")
def _private_cache_dir(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """Tests (and the ktrain processes they start) never read or write the user's ~/.cache."""
    previous = os.environ.get("KTRAIN_CACHE_DIR")
    os.environ["KTRAIN_CACHE_DIR"] = str(tmp_path_factory.mktemp("ktrain-cache"))
    yield
    if previous is None:
        os.environ.pop("KTRAIN_CACHE_DIR", None)
    else:
        os.environ["KTRAIN_CACHE_DIR"] = previous


@dataclass
class Result:
    exit_code: int
    stdout: str
    stderr: str


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """Run `ktrain ARGS...` in-process; returns exit code, stdout and stderr."""
    from ktrain.cli import main

    def run(*args: str, stdin: str = "") -> Result:
        out, err = io.StringIO(), io.StringIO()
        monkeypatch.setattr(sys, "stdout", out)
        monkeypatch.setattr(sys, "stderr", err)
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
        code = main(list(args))
        monkeypatch.undo()
        return Result(code, out.getvalue(), err.getvalue())

    return run


@pytest.fixture(autouse=True)
def _no_ambient_cluster(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """Tests never see the developer's cluster: KUBECONFIG points at nothing, no in-cluster env.

    Set through os.environ (not monkeypatch): the `cli` fixture undoes its monkeypatches."""
    import os

    saved = {key: os.environ.get(key) for key in ("KUBECONFIG", "KUBERNETES_SERVICE_HOST")}
    os.environ["KUBECONFIG"] = str(tmp_path_factory.getbasetemp() / "no-kubeconfig")
    os.environ.pop("KUBERNETES_SERVICE_HOST", None)
    yield
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


@dataclass
class Kube:
    """An API-server double and a kubeconfig whose context namespace is `team-a`."""

    srv: object
    kubeconfig: str
    namespace: str = "team-a"

    def args(self) -> list[str]:
        return ["--kubeconfig", self.kubeconfig]


@pytest.fixture
def kube(tmp_path: Path):  # type: ignore[no-untyped-def]
    from apiserver import ApiServerDouble

    with ApiServerDouble() as srv:
        srv.add_namespace("team-a")
        path = srv.write_kubeconfig(tmp_path / "kubeconfig", namespace="team-a")
        yield Kube(srv, str(path))


KUBE_TRANSPORTS = ("stdlib", "kubernetes")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Tests marked `both_transports` run once per way ktrain talks to the API server (issue #17):
    its own standard-library client and the `kubernetes` client it falls back to."""
    if metafunc.definition.get_closest_marker("both_transports") is not None:
        metafunc.parametrize("kube_transport", KUBE_TRANSPORTS, indirect=True)


@pytest.fixture(autouse=True)
def kube_transport(request: pytest.FixtureRequest):  # type: ignore[no-untyped-def]
    """Which transport `connect` picks ($KTRAIN_KUBE_CLIENT), for tests parametrized above; other
    tests leave the choice to ktrain. Set through os.environ so subprocesses inherit it."""
    import os

    choice = getattr(request, "param", None)
    saved = os.environ.get("KTRAIN_KUBE_CLIENT")
    if choice is not None:
        os.environ["KTRAIN_KUBE_CLIENT"] = choice
    else:
        os.environ.pop("KTRAIN_KUBE_CLIENT", None)
    yield choice
    if saved is None:
        os.environ.pop("KTRAIN_KUBE_CLIENT", None)
    else:
        os.environ["KTRAIN_KUBE_CLIENT"] = saved
