"""`ktrain-krm` under the real orchestrators: `kubectl kustomize --enable-alpha-plugins` (kustomize's
exec plugin protocol) and `kpt fn eval --exec` (the KRM functions protocol). Skipped where the
tool is not installed.

The kustomization renames everything (namePrefix, namespace) and labels it (commonLabels) before
the transformer runs, so every reference the render writes must agree with the names the objects
finally have: ConfigMaps and Secrets in volumes, PET_MASTER_ADDR, the MPI hostfile's hosts, the
PodGroup a pod names. kustomize must not rename what the transformer emits a second time.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml
from gang_runtimes import _TEMPLATE, COSCHEDULING

KUBECTL = shutil.which("kubectl")
KPT = shutil.which("kpt")
PREFIX, NAMESPACE, LABEL = "team-", "ml", ("app.kubernetes.io/part-of", "training")


def krm_executable(directory: Path) -> Path:
    """`ktrain-krm` as the console script runs it, with this interpreter (installed or not)."""
    directory.mkdir(parents=True, exist_ok=True)
    script = directory / "ktrain-krm"
    script.write_text(f"#!/bin/sh\nexec {sys.executable} -c 'from ktrain.cli.krm import run; run()' \"$@\"\n")
    script.chmod(0o755)
    return script


def install_plugin(xdg: Path, executable: Path) -> None:
    """Where kustomize looks for the exec plugin of apiVersion ktrain.io/v1alpha1, kind KtrainRender."""
    where = xdg / "kustomize" / "plugin" / "ktrain.io" / "v1alpha1" / "ktrainrender"
    where.mkdir(parents=True)
    (where / "KtrainRender").symlink_to(executable)


TRAINJOBS = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: torch
spec:
  runtimeRef: {name: torch-distributed}
  trainer:
    numNodes: 2
    command: [torchrun, train.py]
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: mpi
spec:
  runtimeRef: {name: deepspeed-distributed}
  trainer:
    numNodes: 3
    command: [mpirun, python, train.py]
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: gang
spec:
  runtimeRef: {name: torch-coscheduling}
  trainer: {numNodes: 2}
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: coded
spec:
  runtimeRef: {name: torch-distributed}
  trainer:
    command: [python, train.py]
"""

SSH_SECRET = """\
apiVersion: v1
kind: Secret
metadata:
  name: mpi-keys
type: kubernetes.io/ssh-auth
stringData:
  ssh-privatekey: not-a-real-key
"""

# kubectl's kustomize runs it as the exec plugin of this apiVersion and kind (no annotation: with
# `config.kubernetes.io/function` it would be an exec KRM function, which kubectl skips silently)
CONFIG = """\
apiVersion: ktrain.io/v1alpha1
kind: KtrainRender
metadata:
  name: render{annotation}
spec:
  sshSecret: mpi-keys
  code:
    - job: coded
      paths: [src]
"""


FUNCTION_ANNOTATION = """
  annotations:
    config.kubernetes.io/function: |
      exec:
        path: {exec_path}"""


def write_repo(root: Path, exec_path: str | None = None, jobs: str = TRAINJOBS) -> Path:
    """The repository; `exec_path`: configure ktrain-krm as an exec KRM function at that path."""
    root.mkdir(parents=True)
    (root / "jobs.yaml").write_text(jobs)
    (root / "runtime.yaml").write_text(
        _TEMPLATE.format(name=COSCHEDULING[0], policy=COSCHEDULING[1], scheduler=COSCHEDULING[2])
    )
    (root / "secret.yaml").write_text(SSH_SECRET)
    (root / "src").mkdir()
    (root / "src" / "train.py").write_text("print('training')\n")
    annotation = FUNCTION_ANNOTATION.format(exec_path=exec_path) if exec_path else ""
    (root / "ktrain.yaml").write_text(CONFIG.format(annotation=annotation))
    (root / "kustomization.yaml").write_text(
        textwrap.dedent(
            f"""\
            namePrefix: {PREFIX}
            namespace: {NAMESPACE}
            commonLabels:
              {LABEL[0]}: {LABEL[1]}
            resources:
              - jobs.yaml
              - runtime.yaml
              - secret.yaml
            transformers:
              - ktrain.yaml
            """
        )
    )
    return root


def kustomize(repo: Path, xdg: Path) -> subprocess.CompletedProcess[str]:
    assert KUBECTL is not None
    env = {**os.environ, "XDG_CONFIG_HOME": str(xdg)}
    return subprocess.run(
        [KUBECTL, "kustomize", "--enable-alpha-plugins", str(repo)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


def pod_specs(jobset: dict[str, Any]) -> list[dict[str, Any]]:
    return [r["template"]["spec"]["template"] for r in jobset["spec"]["replicatedJobs"]]


def env_of(jobset: dict[str, Any]) -> dict[str, str]:
    out: dict[str, str] = {}
    for pod in pod_specs(jobset):
        for container in pod["spec"]["containers"]:
            out.update({e["name"]: e.get("value") for e in container.get("env") or []})
    return out


def references(jobset: dict[str, Any]) -> tuple[set[str], set[str]]:
    """(ConfigMap names, Secret names) the JobSet's pods mount."""
    maps, secrets = set(), set()
    for pod in pod_specs(jobset):
        for volume in pod["spec"].get("volumes") or []:
            sources = [volume, *((volume.get("projected") or {}).get("sources") or [])]
            for source in sources:
                if "configMap" in source:
                    maps.add(source["configMap"]["name"])
                if "secret" in source:
                    secrets.add(source["secret"].get("secretName") or source["secret"].get("name"))
    return maps, secrets


def check_references_agree(objects: list[dict[str, Any]]) -> None:
    names = {(o["kind"], o["metadata"]["name"]) for o in objects}
    jobsets = {o["metadata"]["name"]: o for o in objects if o["kind"] == "JobSet"}
    assert set(jobsets) == {f"{PREFIX}{n}" for n in ("torch", "mpi", "gang", "coded")}
    for obj in objects:
        meta = obj["metadata"]
        assert meta["namespace"] == NAMESPACE, obj
        assert meta["labels"][LABEL[0]] == LABEL[1], obj
        assert not meta["name"].startswith(PREFIX * 2), "renamed twice"
        for key in meta.get("annotations") or {}:
            assert not key.startswith(("internal.config.kubernetes.io/", "kustomize.config.k8s.io/")), key
    for name, jobset in jobsets.items():
        maps, secrets = references(jobset)
        for cm in maps:
            assert ("ConfigMap", cm) in names, (name, cm)
        for secret in secrets:
            assert ("Secret", secret) in names, (name, secret)
        env = env_of(jobset)
        if "PET_MASTER_ADDR" in env:
            assert env["PET_MASTER_ADDR"] == f"{name}-node-0-0.{name}"
    torch = jobsets[f"{PREFIX}torch"]
    assert env_of(torch)["PET_NNODES"] == "2"
    # MPI: the hostfile lists this JobSet's pods, the SSH Secret is the renamed one in the repo
    mpi = f"{PREFIX}mpi"
    hostfile = next(o for o in objects if o["kind"] == "ConfigMap" and o["metadata"]["name"] == f"{mpi}-mpi-hostfile")
    hosts = [line.split()[0] for line in hostfile["data"]["hostfile"].splitlines() if line.strip()]
    assert len(hosts) == 3 and all(h.startswith(f"{mpi}-") and h.endswith(f".{mpi}") for h in hosts), hosts
    assert references(jobsets[mpi]) == ({f"{mpi}-mpi-hostfile"}, {f"{PREFIX}mpi-keys"})
    # gang scheduling: the PodGroup has the JobSet's name and every pod names it
    gang = f"{PREFIX}gang"
    assert ("PodGroup", gang) in names
    for pod in pod_specs(jobsets[gang]):
        assert pod["metadata"]["labels"]["scheduling.x-k8s.io/pod-group"] == gang
    # --code: content-named ConfigMaps of the renamed job, mounted by it
    coded = f"{PREFIX}coded"
    code_maps = {n for k, n in names if k == "ConfigMap" and n.startswith(f"{coded}-code-")}
    assert code_maps and code_maps <= references(jobsets[coded])[0]
    # the runtime in the repo was used, not emitted (the jobset target)
    assert not any(o["kind"] == "ClusterTrainingRuntime" for o in objects)


def check_schemas(objects: list[dict[str, Any]]) -> None:
    """Every object passes the API server's checks (the CRD schemas, JobSet's webhooks) with
    unknown fields refused: a server dry-run create on the double."""
    from apiserver import ApiServerDouble
    from conftest import need_shared

    need_shared()  # the CRD schemas
    with ApiServerDouble() as srv:
        srv.add_namespace(NAMESPACE)
        for obj in objects:
            group = obj["apiVersion"].rpartition("/")[0] or None
            rt = srv.cluster.resolve(obj["kind"], group)
            srv.cluster.create(rt, NAMESPACE, obj, "test", dry_run=True, field_validation="Strict")


@pytest.mark.double
@pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")
def test_kubectl_kustomize_renders_trainjobs_after_the_renames_and_every_reference_agrees(tmp_path: Path) -> None:
    xdg = tmp_path / "xdg"
    install_plugin(xdg, krm_executable(tmp_path / "bin"))
    repo = write_repo(tmp_path / "repo")
    built = kustomize(repo, xdg)
    assert built.returncode == 0, built.stderr
    objects = [d for d in yaml.safe_load_all(built.stdout) if d]
    check_references_agree(objects)
    check_schemas(objects)
    # the same repository, the same output (a GitOps diff shows only real changes)
    assert kustomize(repo, xdg).stdout == built.stdout


@pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")
def test_kubectl_kustomize_fails_on_a_bad_trainjob_with_its_message(tmp_path: Path) -> None:
    xdg = tmp_path / "xdg"
    install_plugin(xdg, krm_executable(tmp_path / "bin"))
    bad = TRAINJOBS.replace("numNodes: 3", "numNodes: -1")
    repo = write_repo(tmp_path / "repo", jobs=bad)
    built = kustomize(repo, xdg)
    assert built.returncode != 0
    assert built.stdout == ""
    assert "TrainJob ml/team-mpi" in built.stderr and "spec.trainer.numNodes" in built.stderr


@pytest.mark.skipif(shutil.which("kustomize") is None, reason="standalone kustomize is not installed")
def test_kustomize_build_runs_it_as_an_exec_krm_function(tmp_path: Path) -> None:
    """kustomize's own `build --enable-exec` (kubectl's kustomize lacks the flag and skips exec
    KRM functions silently): the same output through the KRM protocol."""
    executable = krm_executable(tmp_path / "bin")
    repo = write_repo(tmp_path / "repo", str(executable))
    built = subprocess.run(
        ["kustomize", "build", "--enable-alpha-plugins", "--enable-exec", str(repo)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert built.returncode == 0, built.stderr
    check_references_agree([d for d in yaml.safe_load_all(built.stdout) if d])


def kpt_eval(package: Path, executable: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    assert KPT is not None
    return subprocess.run(
        [KPT, "fn", "eval", str(package), "--exec", str(executable), "-o", "stdout", *extra],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=package,
    )


@pytest.mark.skipif(KPT is None, reason="kpt is not installed")
def test_kpt_fn_eval_runs_it_as_a_krm_function(tmp_path: Path) -> None:
    executable = krm_executable(tmp_path / "bin")
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "jobs.yaml").write_text(TRAINJOBS.split("---\n")[0] + "---\n" + SSH_SECRET.replace("mpi-keys", "other"))
    config = tmp_path / "fn-config.yaml"
    config.write_text("apiVersion: ktrain.io/v1alpha1\nkind: KtrainRender\nmetadata: {name: r}\nspec: {}\n")
    ran = kpt_eval(package, executable, "--fn-config", str(config))
    assert ran.returncode == 0, ran.stderr
    out = yaml.safe_load(ran.stdout)
    kinds = [(i["kind"], i["metadata"]["name"]) for i in out["items"]]
    assert kinds == [("JobSet", "torch"), ("Secret", "other")]
    # both stay in jobs.yaml, at distinct indexes: kpt could write them back
    annotations = [i["metadata"]["annotations"] for i in out["items"]]
    assert [a["config.kubernetes.io/path"] for a in annotations] == ["jobs.yaml", "jobs.yaml"]
    assert [a["config.kubernetes.io/index"] for a in annotations] == ["0", "1"]


@pytest.mark.skipif(KPT is None, reason="kpt is not installed")
def test_kpt_shows_the_error_result_and_fails(tmp_path: Path) -> None:
    executable = krm_executable(tmp_path / "bin")
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "jobs.yaml").write_text(TRAINJOBS.split("---\n")[1])  # MPI, and no sshSecret
    ran = kpt_eval(package, executable)
    assert ran.returncode != 0
    assert "[error] trainer.kubeflow.org/v1alpha1/TrainJob/mpi" in ran.stderr
    assert "sshSecret" in ran.stderr
    # key=value arguments reach it as a ConfigMap
    ran = kpt_eval(package, executable, "--", "sshSecret=keys")
    assert ran.returncode == 0, ran.stderr
    assert "secretName: keys" in ran.stdout
