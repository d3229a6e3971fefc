"""`ktrain job diff` against the API-server double: no difference right after `job create`, the
difference after a change (a manual edit, a changed job file, a changed runtime), kubectl diff's
exit statuses, Secret masking and KUBECTL_EXTERNAL_DIFF."""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

pytestmark = pytest.mark.both_transports  # each test runs through both HTTP clients (conftest)

NS = "team-a"

JOB = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: d1
spec:
  runtimeRef: {name: torch-distributed}
  trainer:
    numNodes: 2
    command: [torchrun, train.py]
    env:
      - {name: LR, value: "0.1"}
"""


@pytest.fixture
def job_file(tmp_path: Path) -> Path:
    path = tmp_path / "job.yaml"
    path.write_text(JOB)
    return path


def changes(text: str) -> list[str]:
    """The changed lines of a unified diff, unindented."""
    lines = [line for line in text.splitlines() if line[:1] in "+-" and line[:3] not in ("+++", "---")]
    return [line[0] + line[1:].strip() for line in lines]


def create(cli: Any, kube: Any, *args: str) -> None:
    r = cli("job", "create", *kube.args(), *args)
    assert r.exit_code == 0, r.stderr


def diff(cli: Any, kube: Any, *args: str) -> Any:
    return cli("job", "diff", *kube.args(), *args)


def test_no_difference_right_after_create(cli: Any, kube: Any, job_file: Path) -> None:
    create(cli, kube, "-f", str(job_file))
    kube.srv.clear_requests()
    r = diff(cli, kube, "d1", "-f", str(job_file))
    assert (r.exit_code, r.stdout) == (0, ""), r.stderr
    # the render was normalised by a server dry run of a create, which stored nothing
    (dry,) = kube.srv.requests_for("create", "jobsets")
    assert dry.param("dryRun") == "All"
    assert [o["metadata"]["name"] for o in kube.srv.objects("jobsets", NS)] == ["d1"]


def test_a_manual_edit_is_a_difference(cli: Any, kube: Any, job_file: Path) -> None:
    create(cli, kube, "-f", str(job_file))
    jobset = kube.srv.get_object("jobsets", "d1", NS)
    jobset["metadata"].setdefault("labels", {})["edited"] = "by-hand"
    kube.srv.put_object(jobset)
    r = diff(cli, kube, "d1", "-f", str(job_file))
    assert r.exit_code == 1, r.stderr
    name = "jobset.x-k8s.io.v1alpha2.JobSet.team-a.d1"
    assert r.stdout.startswith(f"diff -u -N LIVE/{name} MERGED/{name}\n--- LIVE/{name}\n+++ MERGED/{name}\n")
    removed = [line for line in r.stdout.splitlines() if line.startswith("-") and not line.startswith("---")]
    assert removed == ["-  labels:", "-    edited: by-hand"]


def test_a_changed_job_file_shows_what_would_change(cli: Any, kube: Any, job_file: Path, tmp_path: Path) -> None:
    create(cli, kube, "-f", str(job_file))
    changed = tmp_path / "changed.yaml"
    changed.write_text(JOB.replace('value: "0.1"', 'value: "0.2"'))
    r = diff(cli, kube, "d1", "-f", str(changed))
    assert r.exit_code == 1, r.stderr
    assert changes(r.stdout) == ["-value: '0.1'", "+value: '0.2'"]


def test_a_job_submitted_as_a_jobset_needs_its_source(cli: Any, kube: Any, job_file: Path) -> None:
    create(cli, kube, "-f", str(job_file))
    r = diff(cli, kube, "d1")
    assert r.exit_code == 2
    assert "submitted as a JobSet" in r.stderr and "-f job.yaml" in r.stderr


def test_errors_exit_above_one(cli: Any, kube: Any, job_file: Path) -> None:
    r = diff(cli, kube, "nothing-here", "-f", str(job_file))
    assert r.exit_code > 1 and "not found" in r.stderr
    create(cli, kube, "-f", str(job_file))
    r = diff(cli, kube, "d1", "--runtime", "no-such-runtime")
    assert r.exit_code > 1 and "no-such-runtime" in r.stderr
    r = diff(cli, kube, "d1", "-f", str(job_file), "--name", "other")
    assert r.exit_code == 2


def test_mpi_keys_are_not_a_difference_and_secrets_show_masked(
    cli: Any, kube: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    args = ["--runtime", "deepspeed-distributed", "--name", "m1", "--nodes", "2", "--", "mpirun", "python", "t.py"]
    create(cli, kube, *args)
    # every render makes a new key pair: the live keys are what a render would keep
    r = diff(cli, kube, "m1", *args)
    assert (r.exit_code, r.stdout) == (0, ""), r.stderr + r.stdout
    secret = kube.srv.get_object("secrets", "m1-mpi-ssh-auth", NS)
    secret["metadata"]["labels"] = {"edited": "yes"}
    kube.srv.put_object(secret)
    r = diff(cli, kube, "m1", *args)
    assert r.exit_code == 1
    assert "v1.Secret.team-a.m1-mpi-ssh-auth" in r.stdout
    # the whole files, as an external diff program sees them: values masked on both sides
    show = "for d in sys.argv[1:3]:\n    for f in sorted(os.listdir(d)):\n        print(open(f'{d}/{f}').read())"
    monkeypatch.setenv("KUBECTL_EXTERNAL_DIFF", external(tmp_path, show))
    r = diff(cli, kube, "m1", *args)
    assert r.stdout.count("ssh-privatekey: '***'") == 2 and r.stdout.count("ssh-publickey: '***'") == 2
    assert all(value not in r.stdout + r.stderr for value in secret["data"].values())


def test_secret_values_are_masked_as_kubectl_diff_masks_them() -> None:
    from ktrain.jobs.diff import mask_secrets

    live = {"kind": "Secret", "data": {"same": "YQ==", "changed": "Yg==", "gone": "Yw=="}}
    merged = {"kind": "Secret", "data": {"same": "YQ==", "changed": "ZA==", "new": "ZQ=="}}
    before, after = mask_secrets(live, merged)
    assert before == {"kind": "Secret", "data": {"same": "***", "changed": "*** (before)", "gone": "***"}}
    assert after == {"kind": "Secret", "data": {"same": "***", "changed": "*** (after)", "new": "***"}}
    assert mask_secrets(live, None)[1] is None


RUNTIME = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: team-torch
spec:
  mlPolicy: {numNodes: 1, torch: {}}
  template:
    spec:
      replicatedJobs:
        - name: node
          template:
            metadata:
              labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}
            spec:
              template:
                spec:
                  containers:
                    - {name: node, image: "registry.example/torch:1"}
"""


def act_as_controller(cli: Any, kube: Any, name: str) -> None:
    """What the Trainer controller does with a TrainJob: create its objects, owned by it."""
    rendered = cli("job", "render", *kube.args(), "-n", NS, "--runtime", "team-torch", "--name", name, "-o", "json")
    assert rendered.exit_code == 0, rendered.stderr
    data = json.loads(rendered.stdout)
    objects = data["items"] if data.get("kind") == "List" else [data]
    trainjob = kube.srv.get_object("trainjobs", name, NS)
    owner = {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "name": name,
        "uid": trainjob["metadata"]["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }
    for obj in objects:
        obj["metadata"]["ownerReferences"] = [owner]
        group = obj["apiVersion"].rpartition("/")[0] or None
        rt = kube.srv.cluster.resolve(obj["kind"], group)
        kube.srv.cluster.create(rt, NS, obj, "trainer")


def test_a_trainjob_against_a_runtime_changed_since_it_was_submitted(cli: Any, kube: Any) -> None:
    kube.srv.put_object(yaml.safe_load(RUNTIME))
    create(cli, kube, "--runtime", "team-torch", "--name", "tj", "--target", "trainjob")
    act_as_controller(cli, kube, "tj")
    r = diff(cli, kube, "tj")  # rendered from the live TrainJob, with the cluster's runtime
    assert (r.exit_code, r.stdout) == (0, ""), r.stderr + r.stdout
    runtime = kube.srv.get_object("clustertrainingruntimes", "team-torch", None)
    spec = runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    spec["containers"][0]["image"] = "registry.example/torch:2"
    kube.srv.put_object(runtime)
    r = diff(cli, kube, "tj")
    assert r.exit_code == 1, r.stderr
    assert "jobset.x-k8s.io.v1alpha2.JobSet.team-a.tj" in r.stdout
    assert changes(r.stdout) == ["-- image: registry.example/torch:1", "+- image: registry.example/torch:2"]


def test_a_trainjob_whose_controller_made_nothing_yet_shows_the_objects_as_added(cli: Any, kube: Any) -> None:
    kube.srv.put_object(yaml.safe_load(RUNTIME))
    create(cli, kube, "--runtime", "team-torch", "--name", "tj", "--target", "trainjob")
    r = diff(cli, kube, "tj")
    assert r.exit_code == 1
    assert "--- LIVE/jobset.x-k8s.io.v1alpha2.JobSet.team-a.tj" in r.stdout
    assert not any(line.startswith("-") and not line.startswith("---") for line in r.stdout.splitlines())


def external(tmp_path: Path, body: str) -> str:
    script = tmp_path / "mydiff"
    script.write_text(f"#!{sys.executable}\nimport os, sys\n{body}\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return str(script)


def test_kubectl_external_diff_gets_the_live_and_merged_directories(
    cli: Any, kube: Any, job_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    create(cli, kube, "-f", str(job_file))
    program = external(
        tmp_path,
        "live, merged, *rest = sys.argv[1:]\n"
        "print(os.path.basename(live).startswith('LIVE-'), os.path.basename(merged).startswith('MERGED-'), rest)\n"
        "print(sorted(os.listdir(live)) == sorted(os.listdir(merged)), sorted(os.listdir(live)))\n"
        "same = all(open(f'{live}/{f}').read() == open(f'{merged}/{f}').read() for f in os.listdir(live))\n"
        "sys.exit(0 if same else 1)",
    )
    monkeypatch.setenv("KUBECTL_EXTERNAL_DIFF", f"{program} -N --color=always $(rm) ")
    r = diff(cli, kube, "d1", "-f", str(job_file))
    assert r.exit_code == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "True True ['-N', '--color=always']"  # kubectl's rule: only [a-zA-Z0-9-=] arguments
    assert lines[1] == "True ['jobset.x-k8s.io.v1alpha2.JobSet.team-a.d1']"
    assert "invalid argument is ignored: $(rm)" in r.stderr
    jobset = kube.srv.get_object("jobsets", "d1", NS)
    jobset["metadata"].setdefault("labels", {})["edited"] = "yes"
    kube.srv.put_object(jobset)
    assert diff(cli, kube, "d1", "-f", str(job_file)).exit_code == 1


def test_an_external_diff_that_fails_is_an_error(
    cli: Any, kube: Any, job_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    create(cli, kube, "-f", str(job_file))
    monkeypatch.setenv("KUBECTL_EXTERNAL_DIFF", external(tmp_path, "sys.exit(3)"))
    r = diff(cli, kube, "d1", "-f", str(job_file))
    assert r.exit_code == 2 and "exit status 3" in r.stderr
    monkeypatch.setenv("KUBECTL_EXTERNAL_DIFF", str(tmp_path / "no-such-program"))
    r = diff(cli, kube, "d1", "-f", str(job_file))
    assert r.exit_code == 2 and "failed to run" in r.stderr
