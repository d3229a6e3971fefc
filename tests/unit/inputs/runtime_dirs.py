"""Runtime directories the tests of `ktrain.inputs.registry` and `ktrain.inputs.parse_cache` share
(their fixtures are in conftest.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ktrain.inputs import registry

RUNTIME = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: cached-rt
spec:
  mlPolicy:
    numNodes: 2
  template:
    spec:
      replicatedJobs:
      - name: node
        template:
          spec:
            template:
              spec:
                containers:
                - name: node
                  image: img:1
"""


def _count_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The runtime files the registry reads (from the parse cache or not)."""
    calls: list[str] = []
    real = registry._runtime_documents

    def counting(path: str, source: str):  # type: ignore[no-untyped-def]
        calls.append(os.path.basename(path))
        return real(path, source)

    monkeypatch.setattr(registry, "_runtime_documents", counting)
    return calls


def _find(directory: Path, name: str) -> registry.RuntimeEntry | None:
    return registry.RuntimeRegistry(dirs=[str(directory)], bundled=False).find(name)
