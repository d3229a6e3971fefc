"""Under the real kustomize (`kubectl kustomize --enable-alpha-plugins`), the ktrain-krm transformer
leaves every other resource exactly as kustomize alone prints it (issue #37, item 9a): the same
bytes. (kubectl 1.32's kustomize itself writes `1e3` as `1000` and `on` as `"on"`; kpt keeps the
text, see tests/fuzz/test_krm_spelling_properties.py.) Skipped where kubectl is not installed."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

KUBECTL = shutil.which("kubectl")
pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")

THINGS = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: spelled
data:
  float: 1e3
  hex: 0x10
  underscores: 1_000
  octal: 012
  bool: on
  letter: n
  nothing: ~
  stamp: 2001-12-14 21:59:43.10 -5
  nosuchday: 2020-02-30
  quoted: 'single'
  double: "double"
  script: |
    echo {{ not a template }}
---
apiVersion: example.com/v1
kind: Thing
metadata:
  name: thing
spec:
  list: [0o17, +1, .5, yes, Off, "x"]
  nested: {a: 1., b: 190:20:30}
"""

JOB = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: torch
spec:
  runtimeRef: {name: torch-distributed}
"""


def build(root: Path, transformer: bool, xdg: Path) -> str:
    lines = ["resources:", "  - things.yaml", "  - job.yaml" if transformer else ""]
    if transformer:
        lines += ["transformers:", "  - ktrain.yaml"]
    (root / "kustomization.yaml").write_text("\n".join(lines) + "\n")
    assert KUBECTL is not None
    done = subprocess.run(
        [KUBECTL, "kustomize", "--enable-alpha-plugins", str(root)],
        capture_output=True,
        text=True,
        env={**os.environ, "XDG_CONFIG_HOME": str(xdg)},
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_kustomize_prints_other_resources_the_same_with_the_ktrain_transformer(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "things.yaml").write_text(THINGS)
    (root / "job.yaml").write_text(JOB)
    (root / "ktrain.yaml").write_text("apiVersion: ktrain.io/v1alpha1\nkind: KtrainRender\nmetadata: {name: r}\n")
    xdg = tmp_path / "xdg"
    where = xdg / "kustomize" / "plugin" / "ktrain.io" / "v1alpha1" / "ktrainrender"
    where.mkdir(parents=True)
    script = where / "KtrainRender"
    script.write_text(f"#!/bin/sh\nexec {sys.executable} -c 'from ktrain.cli.krm import run; run()' \"$@\"\n")
    script.chmod(0o755)
    alone = build(root, transformer=False, xdg=xdg)
    with_ktrain = build(root, transformer=True, xdg=xdg)
    assert "kind: JobSet" in with_ktrain
    documents = [d for d in with_ktrain.split("---\n") if "kind: JobSet" not in d]
    assert "---\n".join(documents) == alone
