"""The starter TrainJob of `ktrain job init` (`ktrain.authoring.starter`): what it reads from the
runtime, and that a runtime's own values stay inside comments. The command itself is tested in
tests/cli/test_init.py."""

from __future__ import annotations

from pathlib import Path

import yaml

from ktrain.authoring.starter import render_starter, starter_context
from ktrain.inputs.registry import RuntimeRegistry

TEAM_RUNTIME = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata: {name: team-rt, namespace: ml}
spec:
  mlPolicy: {numNodes: 3, torch: {}}
  template:
    spec:
      replicatedJobs:
      - name: node
        template:
          metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
          spec:
            template:
              spec:
                containers:
                - name: node
                  image: "evil\\nkind: Secret # x"
                  command: ["python", "a b.py"]
                  env: [{name: A, value: "1\\nkind: Oops"}, {name: B, valueFrom: {fieldRef: {fieldPath: x}}}]
"""


def test_a_torch_runtime_states_its_image_nodes_and_processes() -> None:
    context = starter_context(RuntimeRegistry().get("torch-distributed"), "schema.json")
    assert context["name"] == "torch-distributed" and context["kind"] == "ClusterTrainingRuntime"
    assert (context["policy"], context["framework"], context["num_nodes"]) == ("torch", "torch", 1)
    assert context["nproc"] == "auto with GPUs, else the CPU count"
    assert context["image"].startswith("pytorch/pytorch:")
    assert context["example_command"] == ["torchrun", "train.py"]
    assert (context["launcher"], context["torchtune"], context["initializers"]) == (False, False, {})


def test_an_mpi_runtime_has_a_launcher_and_its_processes_per_node() -> None:
    context = starter_context(RuntimeRegistry().get("deepspeed-distributed"), "schema.json")
    assert context["policy"] == "mpi" and context["framework"] == "deepspeed"
    assert context["launcher"] is True
    assert context["nproc"].startswith("1 (mlPolicy.mpi.numProcPerNode")
    assert context["example_command"] == ["mpirun", "python", "train.py"]


def test_a_torchtune_runtime_names_its_initializers_sources() -> None:
    context = starter_context(RuntimeRegistry().get("torchtune-llama3.2-1b"), "schema.json")
    assert context["torchtune"] is True and context["example_command"] == ["tune", "run"]
    assert context["initializers"] == {
        "dataset": "hf://tatsu-lab/alpaca",
        "model": "hf://meta-llama/Llama-3.2-1B-Instruct",
    }


def test_the_starter_is_a_trainjob_on_the_runtime_and_its_values_stay_in_comments(tmp_path: Path) -> None:
    path = tmp_path / "rt.yaml"
    path.write_text(TEAM_RUNTIME)
    entry = RuntimeRegistry(files=[str(path)]).get("team-rt")
    context = starter_context(entry, "https://example.com/trainjob.schema.json")
    assert context["env"] == [{"name": "A", "value": "1\nkind: Oops"}]  # a valueFrom cannot be shown as a value
    text = render_starter(entry, "https://example.com/trainjob.schema.json")
    assert text.startswith("# yaml-language-server: $schema=https://example.com/trainjob.schema.json\n")
    assert '# image: "evil\\nkind: Secret # x"' in text
    assert yaml.safe_load(text) == {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "spec": {"runtimeRef": {"name": "team-rt", "kind": "TrainingRuntime"}, "trainer": {"numNodes": 3}},
    }
