"""`ktrain job render --explain` (`ktrain.authoring.explain`): the same YAML, each field commented
with where it came from."""

from __future__ import annotations

import pytest
import yaml
from conftest import REPO

from ktrain.authoring.explain import explain
from ktrain.errors import ExitCode
from ktrain.inputs.registry import RuntimeRegistry
from ktrain.service.render import render_request
from ktrain.service.requests import JobOverrides, RenderRequest


def _line(text: str, needle: str) -> str:
    return next(line for line in text.splitlines() if needle in line)


def _source(text: str, needle: str) -> str:
    return _line(text, needle).split("  # ", 1)[1]


def test_explain_output_is_the_same_yaml_with_comments(cli) -> None:
    args = ("render", "--runtime", "torch-distributed", "--nodes", "4", "--env", "LR=1")
    plain, explained = cli(*args, "--", "torchrun", "t.py"), cli(*args, "--explain", "--", "torchrun", "t.py")
    assert explained.exit_code == 0, explained.stderr
    assert list(yaml.safe_load_all(explained.stdout)) == list(yaml.safe_load_all(plain.stdout))
    assert explained.stdout != plain.stdout


def test_torch_pet_env_from_plugin_nodes_from_flag_fields_from_file(cli, tmp_path) -> None:
    job = tmp_path / "job.yaml"
    job.write_text(
        "kind: TrainJob\nmetadata: {name: demo}\nspec:\n  runtimeRef: {name: torch-distributed}\n"
        "  trainer:\n    image: my/img:1\n    numNodes: 2\n"
    )
    r = cli("render", "-f", str(job), "--nodes", "4", "--label", "team=ml", "--explain")
    assert r.exit_code == 0, r.stderr
    out = r.stdout
    assert _source(out, "parallelism: 4") == "flag"
    assert _source(out, "name: PET_NNODES") == "torch plugin (ML policy)"
    assert _source(out, "value: demo-node-0-0.demo") == "torch plugin (ML policy)"  # PET_MASTER_ADDR
    assert _source(out, "containerPort: 29500") == "torch plugin (ML policy)"
    assert _source(out, "image: my/img:1") == "TrainJob field"
    assert _source(out, "trainer.kubeflow.org/trainjob-ancestor-step") == "runtime template"
    assert _source(out, "groupName: default") == "CRD default"
    assert _source(out, "team: ml") == "runtime patch by ktrain.io/cli-flags"
    assert _source(out, "  name: demo") == "TrainJob metadata"


def test_set_and_a_file_patch_are_told_apart(cli, tmp_path) -> None:
    job = tmp_path / "job.yaml"
    job.write_text(
        "kind: TrainJob\nspec:\n  runtimeRef: {name: torch-distributed}\n  runtimePatches:\n"
        "    - manager: acme.io/platform\n      trainingRuntimeSpec:\n        template:\n"
        "          metadata: {labels: {cost-center: '42'}}\n"
    )
    r = cli("render", "-f", str(job), "--set", "trainer.numNodes=3", "--name", "j", "--explain")
    assert r.exit_code == 0, r.stderr
    assert _source(r.stdout, "cost-center") == "runtime patch by acme.io/platform"
    assert _source(r.stdout, "parallelism: 3") == "flag"
    assert _source(r.stdout, "  name: j") == "flag --name"


def test_mpi_explain_credits_the_mpi_plugin(cli) -> None:
    r = cli(
        "render",
        "--runtime",
        "deepspeed-distributed",
        "--nodes",
        "3",
        "--ssh-secret",
        "keys",
        "--explain",
        "--",
        "mpirun",
        "train.py",
    )
    assert r.exit_code == 0, r.stderr
    out = r.stdout
    assert _source(out, "hostfile: |") == "mpi plugin (ML policy)"
    assert _source(out, "name: OMPI_MCA_orte_default_hostfile") == "mpi plugin (ML policy)"
    assert _source(out, "secretName: keys") == "mpi plugin (ML policy)"
    assert _source(out, "- /usr/sbin/sshd") == "runtime template"
    assert _source(out, "- mpirun") == "flag"
    plain = cli(
        "render",
        "--runtime",
        "deepspeed-distributed",
        "--nodes",
        "3",
        "--ssh-secret",
        "keys",
        "--",
        "mpirun",
        "train.py",
    )
    assert list(yaml.safe_load_all(out)) == list(yaml.safe_load_all(plain.stdout))


def test_mpi_explain_says_the_code_wrapper_reaches_every_host(cli, tmp_path) -> None:
    (tmp_path / "train.py").write_text("print(1)\n")
    base = [
        "render",
        "--runtime",
        "deepspeed-distributed",
        "--ssh-secret",
        "keys",
        "--code",
        str(tmp_path),
        "--explain",
    ]
    mpi = cli(*base, "--pip", "numpy", "--", "mpirun", "python3", "train.py")
    assert mpi.exit_code == 0, mpi.stderr
    assert _source(mpi.stdout, "- ppr:1:node") == (
        "--code/--pip wrapper (ktrain: copy the code, pip install, also on every MPI host through mpirun, "
        "exec the command)"
    )
    assert _source(mpi.stdout, "- train.py").endswith(", run by the --code/--pip wrapper")
    torch = cli(*base[:2], "torch-distributed", *base[5:], "--", "torchrun", "train.py")
    assert torch.exit_code == 0, torch.stderr
    assert "also on every MPI host" not in torch.stdout


def test_volcano_explain_credits_the_scheduler_plugin(cli, tmp_path) -> None:
    runtime = (
        (REPO / "runtimes" / "torch-distributed.yaml")
        .read_text()
        .replace("    torch: {}", "    torch: {}\n  podGroupPolicy:\n    volcano: {}")
        .replace("name: torch-distributed", "name: torch-volcano")
    )
    (tmp_path / "rt.yaml").write_text(runtime)
    r = cli(
        "render",
        "--runtime-file",
        str(tmp_path / "rt.yaml"),
        "--runtime",
        "torch-volcano",
        "--nodes",
        "2",
        "--queue",
        "gpu",
        "--name",
        "v",
        "--explain",
    )
    assert r.exit_code == 0, r.stderr
    out = r.stdout
    assert _source(out, "kind: PodGroup") == "volcano plugin (scheduler)"
    assert _source(out, "minMember: 2") == "volcano plugin (scheduler)"
    assert _source(out, "scheduling.k8s.io/group-name: v") == "volcano plugin (scheduler)"
    assert _source(out, "scheduling.volcano.sh/queue-name: gpu") == "runtime patch by ktrain.io/cli-flags"
    assert _source(out, "name: PET_NNODES") == "torch plugin (ML policy)"


def test_explain_needs_yaml_output(cli) -> None:
    r = cli("render", "--runtime", "torch-distributed", "--explain", "-o", "json")
    assert r.exit_code == ExitCode.USAGE and "--explain" in r.stderr


BUNDLED = sorted(p.stem for p in (REPO / "runtimes").glob("*.yaml"))


@pytest.mark.parametrize("runtime", BUNDLED)
def test_explain_comments_every_leaf_of_every_bundled_runtime(cli, runtime: str) -> None:
    args: tuple[str, ...] = ("render", "--runtime", runtime, "--name", "x", "--ssh-secret", "keys", "--nodes", "1")
    if runtime.startswith("torchtune"):
        args += ("--dataset", "hf://a/b", "--", "tune", "run")
    plain, explained = cli(*args), cli(args[0], "--explain", *args[1:])
    assert plain.exit_code == 0 and explained.exit_code == 0, explained.stderr
    assert list(yaml.safe_load_all(explained.stdout)) == list(yaml.safe_load_all(plain.stdout))
    assert _uncommented_leaves(explained.stdout) == []


def _uncommented_leaves(text: str) -> list[str]:
    """Scalar lines without a `# source` comment (mapping headers and block-scalar bodies skipped)."""
    missing = []
    block_indent = None
    for line in text.splitlines():
        indent = len(line) - len(line.lstrip(" "))
        if block_indent is not None and (not line.strip() or indent > block_indent):
            continue  # inside a literal block
        block_indent = None
        body = line.split("  # ", 1)[0]
        if body.rstrip().endswith(("|", "|-", "|+")):
            block_indent = indent
        if line == "---" or body.rstrip().endswith(":"):
            continue
        if "  # " not in line:
            missing.append(line)
    return missing


def test_explain_credits_each_field_to_the_last_layer_that_changed_it() -> None:
    overrides = JobOverrides(runtime="torch-distributed", nodes=4, command=["torchrun", "t.py"], env=[("LR", "1")])
    outcome = render_request(RenderRequest(overrides=overrides), RuntimeRegistry())
    assert outcome.ctx is not None
    (jobset,) = outcome.result.objects
    (note,) = explain(
        outcome.result.objects,
        outcome.job,
        outcome.runtime.runtime,
        outcome.ctx,
        None,
        "derived from the job's content",
        "default namespace",
        {"flag": "flag --nodes/--env/--"},  # a caller may rename a layer
    )
    job = ("spec", "replicatedJobs", 0, "template", "spec")
    node = (*job, "template", "spec", "containers", 0)
    env = [
        e["name"]
        for e in jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]["env"]
    ]
    assert note(("metadata", "name")) == "derived from the job's content"
    assert note(("metadata", "namespace")) == "default namespace"
    assert note(("kind",)) == "jobset plugin"  # not the runtime's own kind
    assert note(("spec", "replicatedJobs", 0, "replicas")) == "CRD default"
    assert note((*node, "image")) == "runtime template"
    assert note((*job, "parallelism")) == "flag --nodes/--env/--"
    assert note((*node, "command", 0)) == "flag --nodes/--env/--"
    assert note((*node, "env", env.index("LR"), "name")) == "flag --nodes/--env/--"
    assert note((*node, "env", env.index("PET_NNODES"), "name")) == "torch plugin (ML policy)"
    assert note(("no", "such", "field")) is None
