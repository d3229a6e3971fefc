"""Shared fixtures: where ../shared is, and a CLI runner that captures stdout/stderr.

Also the guards that keep a clone without ../shared green. The markers (pyproject.toml):

- `shared`: the test needs ../shared (upstream CRDs and examples, conformance cases); it is skipped,
  with the reason, when ../shared is absent. `shared(optional=True)`: it runs without ../shared and
  checks more with it.
- `double`: the test starts the API-server double (tests/apiserver), which validates custom
  resources against the CRDs under ../shared when they are there. Added here to every test that
  uses the `kube` fixture or whose module imports ApiServerDouble; mark the others yourself.

CI (.ci/run) runs the whole suite with ../shared, then the `double or shared` tests once more on a
copy of the tree with no ../shared. For that second run to cover every test that could depend on
../shared, a test fails when it reads a file under ../shared without the `shared` marker, or starts
the double without the `double` marker (an audit hook sees both).
"""

from __future__ import annotations

import io
import linecache
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

# Property tests: the same examples on every run by default, so a landing is never decided by
# the draw (a failure names its example and reproduces). KTRAIN_HYPOTHESIS=explore draws fresh
# ones (1,000 where a test sets no count of its own) to look for new counterexamples (README).
try:
    from hypothesis import settings as _hypothesis_settings
except ImportError:  # pragma: no cover - hypothesis is in the test extra
    pass
else:
    _hypothesis_settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
    _hypothesis_settings.register_profile("explore", max_examples=1000, print_blob=True)
    _hypothesis_settings.load_profile(os.environ.get("KTRAIN_HYPOTHESIS", "ci"))

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
CASES = SHARED / "conformance" / "cases"
UPSTREAM = SHARED / "reference" / "upstream"
NO_SHARED = "../shared is not present beside the repository"


def need_shared() -> Path:
    """Skip the running test without ../shared (a test calling this must be marked `shared`)."""
    if not SHARED.is_dir():
        pytest.skip(NO_SHARED)
    return SHARED


# --- the ../shared guards (see the module docstring) ---------------------------------------------

# The audit event the double raises when it starts (tests/apiserver/cluster.py).
DOUBLE_STARTED = "ktrain.tests.apiserver_double"
_PATH_EVENTS = frozenset({"open", "os.listdir", "os.scandir", "glob.glob"})
_SHARED_PREFIXES = tuple({str(SHARED) + os.sep, os.path.realpath(SHARED) + os.sep})
_DOUBLE_SOURCE = str(Path(__file__).resolve().parent / "apiserver") + os.sep


@dataclass
class _Guard:
    item: pytest.Item | None = None
    problems: list[str] = field(default_factory=list)

    def note(self, problem: str) -> None:
        if problem not in self.problems:
            self.problems.append(problem)


_guard = _Guard()


def _read_on_behalf_of_the_test() -> bool:
    """Whether a path event under ../shared is the test's own doing. Not so for the double's reads (its
    CRD schemas: the `double` marker covers those), nor for tools reading the source of a module the
    suite imported from ../shared (Hypothesis collects constants from every imported module; linecache
    serves tracebacks)."""
    tools = [_DOUBLE_SOURCE, linecache.__file__]
    hypothesis = sys.modules.get("hypothesis")
    if hypothesis is not None and hypothesis.__file__:
        tools.append(os.path.dirname(hypothesis.__file__) + os.sep)
    prefixes = tuple(tools)
    frame: Any = sys._getframe(2)
    while frame is not None:
        if frame.f_code.co_filename.startswith(prefixes):
            return False
        frame = frame.f_back
    return True


def _audit(event: str, args: tuple[Any, ...]) -> None:
    # Called for every audited operation in the process: return early for all but these few.
    if event in _PATH_EVENTS:
        item = _guard.item
        if item is None or not args or isinstance(args[0], int) or args[0] is None:
            return
        try:  # never raise here: the exception would reach the test's own open()
            path = os.path.abspath(os.fsdecode(args[0]))
        except Exception:  # noqa: BLE001 - e.g. a relative path while the working directory is gone
            return
        if (
            path.startswith(_SHARED_PREFIXES)
            and item.get_closest_marker("shared") is None
            and _read_on_behalf_of_the_test()
        ):
            _guard.note(
                f"it reads {path} but is not marked `shared`: mark it @pytest.mark.shared (skipped "
                "without ../shared) or @pytest.mark.shared(optional=True) (runs without it)"
            )
    elif event == DOUBLE_STARTED:
        item = _guard.item
        if item is not None and item.get_closest_marker("double") is None:
            _guard.note(
                "it starts the API-server double but is not marked `double`: add @pytest.mark.double "
                "(or use the `kube` fixture) so that CI runs it without ../shared too"
            )


def pytest_configure(config: pytest.Config) -> None:
    if not getattr(sys, "_ktrain_shared_guard", False):  # audit hooks cannot be removed: add it once
        sys.addaudithook(_audit)
        sys._ktrain_shared_guard = True  # type: ignore[attr-defined]


def _starts_the_double(item: pytest.Item) -> bool:
    if "kube" in getattr(item, "fixturenames", ()):
        return True
    server = sys.modules.get("apiserver.server")
    module = getattr(item, "module", None)
    if server is None or module is None:
        return False
    double = (server.ApiServerDouble, server.double_fixture)
    return any(value is d for value in vars(module).values() for d in double)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    skip = pytest.mark.skip(reason=NO_SHARED)
    present = SHARED.is_dir()
    for item in items:
        if _starts_the_double(item):
            item.add_marker(pytest.mark.double)
        marker = item.get_closest_marker("shared")
        if marker is not None and not marker.kwargs.get("optional") and not present:
            item.add_marker(skip)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):  # type: ignore[no-untyped-def]
    _guard.item, _guard.problems = item, []
    yield
    _guard.item = None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):  # type: ignore[no-untyped-def]
    outcome = yield
    if not _guard.problems or item is not _guard.item:
        return
    report = outcome.get_result()
    text = "\n".join(f"This test fails because {problem}." for problem in _guard.problems)
    _guard.problems = []
    if report.failed:
        report.sections.append(("../shared guard", text))
    else:
        report.outcome = "failed"
        report.longrepr = text
        if hasattr(report, "wasxfail"):
            del report.wasxfail


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

    ambient = ("KUBERNETES_SERVICE_HOST", "KTRAIN_FEATURE_GATES", "KTRAIN_STATUS_SERVER")
    saved = {key: os.environ.get(key) for key in ("KUBECONFIG", *ambient)}
    os.environ["KUBECONFIG"] = str(tmp_path_factory.getbasetemp() / "no-kubeconfig")
    for key in ambient:  # nor the developer's defaults for the controller's feature gates
        os.environ.pop(key, None)
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


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--kube-transport",
        choices=KUBE_TRANSPORTS,
        help="run the `both_transports` tests through this transport only (CI's run without ../shared)",
    )


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Tests marked `both_transports` run once per way ktrain talks to the API server (issue #17):
    its own standard-library client and the `kubernetes` client it falls back to."""
    if metafunc.definition.get_closest_marker("both_transports") is not None:
        only = metafunc.config.getoption("--kube-transport")
        metafunc.parametrize("kube_transport", [only] if only else KUBE_TRANSPORTS, indirect=True)


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
