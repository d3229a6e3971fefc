"""Every upstream notebook moves over by its import: the cells of each of Kubeflow Trainer's example
notebooks (../shared/reference/upstream/trainer/notebooks/, verbatim) run once with the Kubeflow SDK
and once with the SDK's imports swapped for ktrain's (`from kubeflow.trainer.X import` → `from
ktrain.X import`, nothing else changed), each in its own interpreter (tests/notebook_kernel.py, as a
kernel runs cells), against the API-server double with a controller that renders every TrainJob,
starts and completes it as its clients read it, without running its code (tests/notebook_controller.py), in a namespace
of its own. What each cell printed, the value it displayed and the error it raised, and the
TrainJobs each run created, must be equal up to the differences docs/python-api.md lists
("What differs from the SDK, on purpose"), which `normalise` and `trainjob_view` undo.

The rule for cells that cannot run here, the same for both (the notebooks are not edited):
- shell and magic lines (`!pip install ...`, `%pip ...`) are left out: they install from the network;
- a cell that imports, outside its functions, a module that is neither the standard library nor
  the SDK's (`torch`, `boto3`, `transformers`, `mlx`, `cloudpathlib`, ...) is left out: it works
  with the trained model, a GPU or an S3 bucket;
- a value the reader is asked to fill in, a commented-out assignment (`# BUCKET = "..."`) of a name
  that later cells read and none assigns, is assigned as written; HF_TOKEN is in the environment;
- a job on a local backend installs its packages (torch, torchvision) from PyPI and trains on
  downloaded data: the cells that make a local backend, or use what such a cell made (its client,
  its job's name), are left out until the name is made again otherwise (a cluster client); with
  `docker info` or `podman info` answering, the container backend's cells run; without, a notebook
  on the container backend is skipped with that reason.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import yaml
from apiserver import ApiServerDouble
from conftest import SHARED
from notebook_controller import NotebookController, TrainJobWebhook

pytestmark = [pytest.mark.shared, pytest.mark.double]

REPO = Path(__file__).resolve().parents[1]
TESTS = Path(__file__).resolve().parent
NOTEBOOKS = SHARED / "reference" / "upstream" / "trainer" / "notebooks"
UPSTREAM_RUNTIMES = SHARED / "reference" / "upstream" / "trainer" / "runtimes"
SDK_MODULES = ("kubeflow", "kubeflow_trainer_api")
SDK_IMPORT = re.compile(r"^(\s*from\s+)kubeflow\.trainer(\.[\w.]+)?(\s+import\b)", re.M)
# The Trainer webhook's detail in an error: the SDK's (in the API server's answer it wraps) and
# ktrain's (`TrainJob is invalid: spec.runtimeRef: ...`).
WEBHOOK_DETAIL = re.compile(r"spec\.runtimeRef: (?:Invalid value: )?(must have [^\"\]\n]*? job)")
KERNEL_TIMEOUT = 300  # seconds for one notebook's cells
PLACEHOLDER = re.compile(r"^#\s*([A-Za-z_]\w*)\s*=\s*(.+)$", re.M)


def notebooks() -> list[Path]:
    return sorted(NOTEBOOKS.glob("**/*.ipynb")) if NOTEBOOKS.is_dir() else []


def code_cells(path: Path) -> list[str]:
    document = json.loads(path.read_text(encoding="utf-8"))
    return ["".join(cell["source"]) for cell in document["cells"] if cell["cell_type"] == "code"]


# --- the rule: what runs here --------------------------------------------------------------------


def _top_level_imports(tree: ast.AST) -> Iterator[str]:
    """Modules a cell imports outside its functions and classes."""
    todo = list(ast.iter_child_nodes(tree))
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Import):
            yield from (alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            yield node.module.split(".")[0]
        todo.extend(ast.iter_child_nodes(node))


def needs_more_than_this_machine(source: str) -> bool:
    """Whether a cell imports (outside its functions) a module other than the standard library's
    and the SDK's: it uses the trained model, a GPU, S3 or a download."""
    tree = ast.parse(source)
    return any(m not in sys.stdlib_module_names and m not in SDK_MODULES for m in _top_level_imports(tree))


def _names(source: str) -> tuple[set[str], set[str]]:
    """(names a cell assigns, names it reads) at any depth."""
    stored, loaded = set(), set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Name):
            (stored if isinstance(node.ctx, ast.Store) else loaded).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            stored.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            stored.update((a.asname or a.name).split(".")[0] for a in node.names)
    return stored, loaded


LOCAL_CONFIGS = ("LocalProcessBackendConfig", "ContainerBackendConfig")


def _assigned_and_read(source: str) -> tuple[set[str], set[str]]:
    """(names a cell assigns other than by import, names it reads)."""
    stored, read = _names(source)
    imported = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            imported.update((a.asname or a.name).split(".")[0] for a in node.names)
    return stored - imported, read


def runnable_cells(cells: list[str], local_configs: tuple[str, ...] = LOCAL_CONFIGS) -> list[str]:
    """The cells as the rule lets them run here (the same list for the SDK and for ktrain; a cell
    left out is an empty one, so the numbering stays the notebook's). A job on a local backend
    installs its packages (torch, torchvision, ...) from PyPI: a cell that makes a local backend
    (`local_configs`), or reads a name such a cell made (its client, its job's name), is left out,
    until the name is made again otherwise (a cluster client)."""
    no_magic = [
        "\n".join(line for line in cell.splitlines() if not line.lstrip().startswith(("!", "%"))) for cell in cells
    ]
    assigned: set[str] = set()
    read: set[str] = set()
    for cell in no_magic:
        stored, loaded = _names(cell)
        assigned |= stored
        read |= loaded
    out = []
    local: set[str] = set()  # names a local backend's cells made
    for cell in no_magic:
        stored, loaded = _assigned_and_read(cell)
        if needs_more_than_this_machine(cell):
            out.append("")
            continue
        if any(f"{config}(" in cell for config in local_configs) or (loaded - stored) & local:
            local |= stored
            out.append("")
            continue
        local -= stored
        fills = [m for m in PLACEHOLDER.finditer(cell) if m.group(1) in read - assigned]
        out.append("".join(f"{m.group(1)} = {m.group(2)}\n" for m in fills) + cell)
    return out


def with_ktrain(cells: list[str]) -> list[str]:
    """The same cells with only the SDK's imports changed: `from kubeflow.trainer[.X] import` →
    `from ktrain[.X] import`."""
    swapped = [SDK_IMPORT.sub(r"\1ktrain\2\3", cell) for cell in cells]
    assert all("kubeflow.trainer" not in cell for cell in swapped), "an import the swap does not cover"
    return swapped


# --- running them ----------------------------------------------------------------------------------


def container_engine() -> str | None:
    for engine in ("docker", "podman"):
        if shutil.which(engine) and subprocess.run([engine, "info"], capture_output=True, timeout=20).returncode == 0:
            return engine
    return None


def run_cells(cells: list[str], kubeconfig: Path, workdir: Path) -> list[dict[str, Any]]:
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "cells.json").write_text(json.dumps(cells))
    env = {
        **os.environ,
        "KUBECONFIG": str(kubeconfig),
        "HF_TOKEN": "hf_the_readers_token",
        # the local backends' pip finds nothing to download
        "DEFAULT_PIP_INDEX_URLS": (workdir / "no-index").as_uri(),
        "PIP_NO_INDEX": "1",
        "PIP_CONFIG_FILE": os.devnull,
        "PYTHONPATH": os.pathsep.join([str(REPO), str(TESTS), os.environ.get("PYTHONPATH", "")]),
    }
    try:
        run = subprocess.run(
            [sys.executable, str(TESTS / "notebook_kernel.py"), "cells.json", "out.json"],
            cwd=workdir,
            env=env,
            capture_output=True,
            text=True,
            timeout=KERNEL_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        partial = workdir / "out.json.partial"
        done = len(json.loads(partial.read_text())) if partial.exists() else 0
        raise AssertionError(f"{workdir.name}: cell {done} still runs after {KERNEL_TIMEOUT} s") from None
    assert run.returncode == 0, run.stderr[-3000:]
    result: list[dict[str, Any]] = json.loads((workdir / "out.json").read_text())
    return result


# --- comparing them: the differences on purpose undone -----------------------------------------------


def normalise(text: str, names: dict[str, str]) -> str:
    """A cell's output with what differs from run to run made alike: the jobs' names (each a fresh
    name per call, in both) and the times (not their time zone: that must be the SDK's)."""
    for name, label in names.items():
        text = text.replace(name, label)
    text = re.sub(r"datetime\.datetime\(\d+(, \d+){1,6}", "datetime.datetime(<time>", text)
    text = re.sub(r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(\.\d+)?", "<time>", text)
    return text


CODE_ANNOTATION = "ktrain.io/code"
CODE_PATCH_MANAGER = "ktrain.io/cli-code"
NODES_ANNOTATION = "ktrain.io/nodes"


def _quantities(value: Any) -> Any:
    """A resource quantity as one string: the SDK sends `{"cpu": 3}` as the number, ktrain as "3"."""
    if isinstance(value, dict):
        return {k: _quantities(v) for k, v in value.items()}
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(int(value)) if float(value).is_integer() else str(value)
    return value


def _pruned(value: Any) -> Any:
    """Without empty lists and maps (the SDK's `env: []`, ktrain's absent env mean the same)."""
    if isinstance(value, dict):
        out = {k: _pruned(v) for k, v in value.items()}
        return {k: v for k, v in out.items() if v not in ([], {}, None)}
    if isinstance(value, list):
        return [_pruned(v) for v in value]
    return value


def runs_a_function(trainer: dict[str, Any]) -> bool:
    """Whether a TrainJob's trainer command is a function's: the SDK's heredoc script, or ktrain's
    code wrapper running the function's file (docs/python-api.md, "the function")."""
    command = " ".join(str(w) for w in trainer.get("command") or [])
    return "read -r -d '' SCRIPT << EOM" in command or "ktrain_train.py" in command


def trainjob_view(trainjob: dict[str, Any], label: str) -> dict[str, Any]:
    """A created TrainJob with what the server or the clock gives left out and the listed
    differences undone: how the function travels (the SDK's heredoc in `trainer.command`; ktrain's
    wrapper command, its runtime patch mounting the function's ConfigMap and the `ktrain.io/code`
    annotation), quantity numbers and strings, empty lists, ktrain's `ktrain.io/nodes` annotation."""
    meta = trainjob["metadata"]
    spec = _pruned(json.loads(json.dumps(trainjob.get("spec") or {})))
    trainer = spec.get("trainer") or {}
    if runs_a_function(trainer):
        trainer["command"] = "<the function>"
        trainer.pop("args", None)
    if "resourcesPerNode" in trainer:
        trainer["resourcesPerNode"] = _quantities(trainer["resourcesPerNode"])
    patches = [p for p in spec.get("runtimePatches") or [] if p.get("manager") != CODE_PATCH_MANAGER]
    spec["runtimePatches"] = patches
    annotations = {
        k: v for k, v in (meta.get("annotations") or {}).items() if k not in (CODE_ANNOTATION, NODES_ANNOTATION)
    }
    return {
        "name": label,
        "labels": meta.get("labels") or None,
        "annotations": annotations or None,
        "spec": _pruned(spec),
    }


def cell_view(cell: dict[str, Any], names: dict[str, str], sdk_error: str | None) -> dict[str, Any]:
    """A cell's output, normalised. An error is compared by its kind: ktrain's errors are its own
    classes with the CLI's messages, each also the built-in exception the SDK raises there
    (docs/python-api.md, "errors"), so a ktrain error stands as the SDK's when it is one."""
    error = cell["error"]
    if error is not None:
        refused = WEBHOOK_DETAIL.search(" ".join([error, *cell.get("causes", [])]))
        error = error.split(":", 1)[0]
        if sdk_error is not None and sdk_error in cell.get("mro", []):
            error = sdk_error
        if refused:  # the TrainJob webhook's refusal: the SDK's after sending, ktrain's before
            error = f"refused: {refused.group(1)}"
    return {
        "stdout": normalise(cell["stdout"], names),
        "value": None if cell["value"] is None else normalise(cell["value"], names),
        "error": error,
    }


@pytest.fixture(scope="module")
def double(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ApiServerDouble, Path]]:
    with ApiServerDouble() as srv:
        for path in sorted((REPO / "runtimes").glob("*.yaml")):
            srv.put_object(yaml.safe_load(path.read_text()))
        # upstream's data-cache runtime, which ktrain does not bundle
        srv.put_object(yaml.safe_load((UPSTREAM_RUNTIMES / "torch_distributed_with_cache.yaml").read_text()))
        yield srv, tmp_path_factory.mktemp("notebooks")


@pytest.fixture(scope="module")
def runs(double: tuple[ApiServerDouble, Path]) -> dict[str, dict[str, Any]]:
    """Every notebook, run with the SDK and with ktrain at once (each in its own namespace)."""
    srv, root = double
    paths = notebooks()
    if not paths:
        pytest.skip("no notebooks under ../shared")
    engine = container_engine()
    plans = []
    for index, path in enumerate(paths):
        key = str(path.relative_to(NOTEBOOKS))
        source = code_cells(path)
        if "ContainerBackendConfig(" in "".join(source) and engine is None:
            continue
        # With a container engine, the container backend's jobs run (their images are pulled).
        cells = runnable_cells(source, ("LocalProcessBackendConfig",) if engine else LOCAL_CONFIGS)
        for side, these in (("sdk", cells), ("ktrain", with_ktrain(cells))):
            namespace = f"nb{index}-{side}"
            srv.add_namespace(namespace)
            kubeconfig = srv.write_kubeconfig(root / f"{namespace}.kubeconfig", namespace=namespace)
            plans.append((key, side, namespace, these, kubeconfig, root / namespace))
    webhook = TrainJobWebhook(srv, root)
    srv.cluster.admission_hooks.append(webhook)
    out: dict[str, dict[str, Any]] = {}
    with NotebookController(srv, [p[2] for p in plans], workdir=root), ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(lambda p: run_cells(p[3], p[4], p[5]), plans))
    for (key, side, namespace, _cells, _k, _w), cells in zip(plans, results, strict=True):
        trainjobs = webhook.admitted.get(namespace, [])  # as created (some notebooks delete them)
        out.setdefault(key, {})[side] = {"cells": cells, "trainjobs": trainjobs, "namespace": namespace}
    return out


@pytest.mark.parametrize("notebook", [str(p.relative_to(NOTEBOOKS)) for p in notebooks()] or ["none"])
def test_the_notebook_runs_alike_with_the_sdk_and_with_ktrain(runs: dict[str, dict[str, Any]], notebook: str) -> None:
    if notebook not in runs:
        pytest.skip(f"{notebook} runs on the container backend: no `docker info` or `podman info` answers here")
    sdk, kt = runs[notebook]["sdk"], runs[notebook]["ktrain"]
    sdk_errors = [None if cell["error"] is None else cell["error"].split(":", 1)[0] for cell in sdk["cells"]]
    views = {}
    for side, run in (("sdk", sdk), ("ktrain", kt)):
        # ktrain dry-runs its create first: each job once, by name, in the order created
        unique = list({tj["metadata"]["name"]: tj for tj in run["trainjobs"]}.values())
        names = {tj["metadata"]["name"]: f"<job-{i}>" for i, tj in enumerate(unique)}
        views[side] = {
            "cells": [cell_view(cell, names, error) for cell, error in zip(run["cells"], sdk_errors, strict=True)],
            "trainjobs": [trainjob_view(tj, names[tj["metadata"]["name"]]) for tj in unique],
        }
    dump = Path(os.environ.get("NOTEBOOK_VIEWS", "")) if os.environ.get("NOTEBOOK_VIEWS") else None
    if dump is not None:  # for a look at what differs: NOTEBOOK_VIEWS=DIR
        dump.mkdir(parents=True, exist_ok=True)
        (dump / (notebook.replace("/", "_") + ".json")).write_text(json.dumps(views, indent=1))
    assert views["ktrain"]["cells"] == views["sdk"]["cells"]
    assert views["ktrain"]["trainjobs"] == views["sdk"]["trainjobs"]
