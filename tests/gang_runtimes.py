"""Runtime files with gang scheduling, for the cluster tests (CLI and e2e): torch on Volcano
and on scheduler-plugins coscheduling. No bundled runtime asks for a PodGroup."""

from __future__ import annotations

from pathlib import Path

_TEMPLATE = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: {name}
  labels:
    trainer.kubeflow.org/framework: torch
spec:
  mlPolicy:
    numNodes: 1
    torch: {{}}
  podGroupPolicy:
    {policy}: {{}}
  template:
    spec:
      replicatedJobs:
        - name: node
          template:
            metadata:
              labels:
                trainer.kubeflow.org/trainjob-ancestor-step: trainer
            spec:
              template:
                spec:
                  schedulerName: {scheduler}
                  containers:
                    - name: node
                      image: pytorch/pytorch:2.13.0-cuda13.0-cudnn9-runtime
                      resources:
                        requests:
                          cpu: "1"
"""

VOLCANO = ("torch-volcano", "volcano", "volcano")
COSCHEDULING = ("torch-coscheduling", "coscheduling", "scheduler-plugins-scheduler")


def write_runtime(directory: Path, which: tuple[str, str, str]) -> Path:
    name, policy, scheduler = which
    path = directory / f"{name}.yaml"
    path.write_text(_TEMPLATE.format(name=name, policy=policy, scheduler=scheduler), encoding="utf-8")
    return path
