"""docs/python-api.md's notebook, the Kubeflow SDK's getting-started flow, runs unchanged apart from its
import line: as written (ktrain) and with `from kubeflow.trainer import ...` (the SDK itself), each
against the API-server double with the Trainer controller and the kubelet played by
tests/trainer_controller.py, and both print what the page says they print.

The notebook runs as a script in its own interpreter, as a notebook kernel would (`inspect.getsource`
needs the function's file), with $KUBECONFIG pointing at the double."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from apiserver import ApiServerDouble
from trainer_controller import TrainerController

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "python-api.md"
NS = "team-a"
KTRAIN_IMPORT = "from ktrain import TrainerClient, CustomTrainer"
SDK_IMPORT = "from kubeflow.trainer import TrainerClient, CustomTrainer"


def notebook() -> tuple[str, str]:
    """(the notebook's code, the output the page shows for it)."""
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("<!-- notebook:") :]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    output = re.search(r"```text\n(.*?)```", section, re.S)
    assert code and output
    return code.group(1), output.group(1)


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[tuple[ApiServerDouble, Path]]:
    with ApiServerDouble() as srv:
        srv.add_namespace(NS)
        for path in sorted((REPO / "runtimes").glob("*.yaml")):
            srv.put_object(yaml.safe_load(path.read_text()))
        yield srv, srv.write_kubeconfig(tmp_path / "kubeconfig", namespace=NS)


def run_notebook(code: str, kubeconfig: Path, workdir: Path) -> subprocess.CompletedProcess[str]:
    script = workdir / "notebook.py"
    script.write_text(code)
    env = {**os.environ, "KUBECONFIG": str(kubeconfig)}
    return subprocess.run(
        [sys.executable, str(script)], env=env, cwd=workdir, capture_output=True, text=True, timeout=180
    )


def test_the_notebook_changes_only_its_import_line() -> None:
    code, _output = notebook()
    assert code.splitlines()[0] == KTRAIN_IMPORT
    assert "ktrain" not in "\n".join(code.splitlines()[1:])


@pytest.mark.parametrize("import_line", [KTRAIN_IMPORT, SDK_IMPORT], ids=["ktrain", "kubeflow-sdk"])
def test_the_notebook_runs_and_prints_what_the_page_says(
    cluster: tuple[ApiServerDouble, Path], tmp_path: Path, import_line: str
) -> None:
    srv, kubeconfig = cluster
    code, expected = notebook()
    code = code.replace(KTRAIN_IMPORT, import_line, 1)
    with TrainerController(srv, NS, tmp_path / "controller") as controller:
        result = run_notebook(code, kubeconfig, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == expected
    assert len(controller.handled) == 1  # one TrainJob, run by the controller, then deleted
    assert srv.objects("trainjobs", NS) == [] and srv.objects("jobsets", NS) == []
