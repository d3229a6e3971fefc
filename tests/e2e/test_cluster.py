"""`job create`, `job list/get` (when present), `job delete` and the error paths, against a real
API server (KTRAIN_E2E_KUBECONFIG). Run: `pytest -m e2e tests/e2e`, or against the API-server
double: `python tests/e2e/run_against_double.py`."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from gang_runtimes import VOLCANO, write_runtime

pytestmark = pytest.mark.e2e

GROUPS = {
    "jobsets": ("jobset.x-k8s.io", "v1alpha2"),
    "podgroups.scheduling.x-k8s.io": ("scheduling.x-k8s.io", "v1alpha1"),
    "podgroups.scheduling.volcano.sh": ("scheduling.volcano.sh", "v1beta1"),
    "trainjobs": ("trainer.kubeflow.org", "v1alpha1"),
}


def inventory(e2e: Any) -> list[str]:
    """Every object of the kinds ktrain writes in the test namespace, as `type/name`."""
    from kubernetes import client

    core = client.CoreV1Api(e2e.api)
    custom = client.CustomObjectsApi(e2e.api)
    out = [
        f"configmaps/{o.metadata.name}"
        for o in core.list_namespaced_config_map(e2e.namespace).items
        if o.metadata.name != "kube-root-ca.crt"
    ]
    out += [
        f"secrets/{o.metadata.name}"
        for o in core.list_namespaced_secret(e2e.namespace).items
        if o.type != "kubernetes.io/service-account-token"
    ]
    for rtype, (group, version) in GROUPS.items():
        plural = rtype.split(".")[0]
        items = custom.list_namespaced_custom_object(group, version, e2e.namespace, plural)["items"]
        out += [f"{rtype}/{o['metadata']['name']}" for o in items]
    return sorted(out)


def has_command(name: str) -> bool:
    from ktrain.completion.tree import load_tree

    return name in load_tree()["root"]["commands"]["job"]["commands"]


@pytest.fixture
def clean(e2e: Any):  # type: ignore[no-untyped-def]
    assert inventory(e2e) == []
    yield e2e
    leftovers = inventory(e2e)
    names = sorted({item.split("/")[1].split("-mpi-")[0] for item in leftovers})
    if names:
        from ktrain.cli import main

        main(["job", "delete", *e2e.args(), *names])
    assert leftovers == [], "the test left objects behind"


def test_torch_deepspeed_and_volcano_jobs_are_created_listed_and_deleted(cli, clean, tmp_path: Path) -> None:
    e2e = clean
    volcano = write_runtime(tmp_path, VOLCANO)
    runs = [
        ("torch-distributed", "e2e-torch", ["--nodes", "2", "--", "torchrun", "train.py"]),
        ("deepspeed-distributed", "e2e-ds", ["--nodes", "2", "--", "mpirun", "python", "train.py"]),
        (VOLCANO[0], "e2e-volcano", ["--runtime-file", str(volcano), "--nodes", "2", "--queue", "default"]),
    ]
    for runtime, name, extra in runs:
        r = cli("job", "create", *e2e.args(), "--runtime", runtime, "--name", name, *extra)
        assert r.exit_code == 0, r.stderr
        assert r.stdout.splitlines()[-1] == f"jobset.jobset.x-k8s.io/{name} created"
    assert inventory(e2e) == [
        "configmaps/e2e-ds-mpi-hostfile",
        "jobsets/e2e-ds",
        "jobsets/e2e-torch",
        "jobsets/e2e-volcano",
        "podgroups.scheduling.volcano.sh/e2e-volcano",
        "secrets/e2e-ds-mpi-ssh-auth",
    ]
    from kubernetes import client

    custom = client.CustomObjectsApi(e2e.api)
    jobset = custom.get_namespaced_custom_object("jobset.x-k8s.io", "v1alpha2", e2e.namespace, "jobsets", "e2e-ds")
    assert jobset["spec"]["suspend"] is False
    secret = client.CoreV1Api(e2e.api).read_namespaced_secret("e2e-ds-mpi-ssh-auth", e2e.namespace)
    (ref,) = secret.metadata.owner_references
    assert (ref.kind, ref.name, ref.uid) == ("JobSet", "e2e-ds", jobset["metadata"]["uid"])

    if has_command("list"):
        listed = cli("job", "list", *e2e.args(), "-o", "name")
        assert listed.exit_code == 0, listed.stderr
        for name in ("e2e-torch", "e2e-ds", "e2e-volcano"):
            assert name in listed.stdout
    if has_command("get"):
        got = cli("job", "get", "e2e-ds", *e2e.args())
        assert got.exit_code == 0, got.stderr
        assert "e2e-ds" in got.stdout

    r = cli("job", "delete", *e2e.args(), "e2e-torch", "e2e-ds", "e2e-volcano", "--wait", "--timeout", "60s")
    assert r.exit_code == 0, r.stderr
    assert inventory(e2e) == []
    again = cli("job", "delete", *e2e.args(), "e2e-ds")
    assert again.exit_code == 4 and "not found" in again.stderr


def test_dry_run_server_stores_nothing(cli, clean) -> None:
    e2e = clean
    r = cli("job", "create", *e2e.args(), "--runtime", "deepspeed-distributed", "--name", "e2e-dry", "--dry-run=server")
    assert r.exit_code == 0, r.stderr
    assert "(server dry run)" in r.stdout
    assert inventory(e2e) == []


def test_trainjob_target_stores_only_the_trainjob(cli, clean) -> None:
    e2e = clean
    r = cli("job", "create", *e2e.args(), "--runtime", "torch-distributed", "--name", "e2e-tj", "--target", "trainjob")
    assert r.exit_code == 0, r.stderr
    assert inventory(e2e) == ["trainjobs/e2e-tj"]
    assert cli("job", "delete", *e2e.args(), "e2e-tj", "--wait", "--timeout", "60s").exit_code == 0
    assert inventory(e2e) == []


def test_an_existing_job_is_refused_then_overwritten(cli, clean) -> None:
    e2e = clean
    args = [*e2e.args(), "--runtime", "deepspeed-distributed", "--name", "e2e-again"]
    assert cli("job", "create", *args).exit_code == 0
    refused = cli("job", "create", *args)
    assert refused.exit_code == 5 and "already exists" in refused.stderr
    replaced = cli("job", "create", *args, "--overwrite")
    assert replaced.exit_code == 0, replaced.stderr
    assert cli("job", "delete", *e2e.args(), "e2e-again").exit_code == 0


def test_objects_the_server_rejects_are_clear_errors_with_nothing_left(cli, clean, tmp_path: Path) -> None:
    e2e = clean
    # metadata the API server validates itself: a label value with a space
    r = cli(
        "job",
        "create",
        *e2e.args(),
        "--runtime",
        "deepspeed-distributed",
        "--name",
        "e2e-bad",
        "--label",
        "team=not valid",
    )
    assert r.exit_code == 5, r.stdout
    assert r.stderr.startswith("error: ") and "Traceback" not in r.stderr
    assert "metadata.labels" in r.stderr
    assert inventory(e2e) == []
    if os.environ.get("KTRAIN_E2E_NO_CRD_SCHEMAS"):
        return  # a stand-in server without the CRD schemas cannot reject the next object
    # a field the JobSet CRD schema rejects
    runtime = write_runtime(tmp_path, VOLCANO)
    runtime.write_text(
        runtime.read_text().replace(
            "                  containers:\n",
            '                  securityContext:\n                    runAsUser: "yes"\n                  containers:\n',
            1,
        )
    )
    r = cli("job", "create", *e2e.args(), "--runtime-file", str(runtime), "--runtime", VOLCANO[0], "--name", "e2e-bad")
    assert r.exit_code == 5, r.stdout
    assert "securityContext.runAsUser" in r.stderr
    assert inventory(e2e) == []


# --- logs (issue #18): what a real API server serves to `job logs` ---------------------------------

POD_TIMEOUT = os.environ.get("KTRAIN_E2E_POD_TIMEOUT", "180s")


def add_pod_of(e2e: Any, job: str, jobset: dict[str, Any]) -> str:
    """A pod as the Job controller would make it for rank 0 of the node step (for clusters that run
    no controller: it stays Pending there, without a node)."""
    from kubernetes import client

    from ktrain import constants as c

    name = f"{job}-node-0-0-e2e"
    client.CoreV1Api(e2e.api).create_namespaced_pod(
        e2e.namespace,
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": name,
                "labels": {c.JOBSET_NAME_LABEL: job, c.JOBSET_RJOB_NAME_LABEL: "node", c.JOBSET_JOB_INDEX_LABEL: "0"},
                "annotations": {c.JOB_COMPLETION_INDEX_ANNOTATION: "0"},
                "ownerReferences": [
                    {
                        "apiVersion": jobset["apiVersion"],
                        "kind": "JobSet",
                        "name": job,
                        "uid": jobset["metadata"]["uid"],
                    }
                ],
            },
            "spec": {"containers": [{"name": "node", "image": "busybox"}], "restartPolicy": "Never"},
        },
    )
    return name


def test_a_log_read_is_answered_by_the_server_not_refused_406(cli, clean) -> None:
    """Works on a bare API server: a suspended job and a pod that never runs. The server answers the
    log request itself (a 400: no host, or no previous container), which it does only after the
    Accept header was accepted; a refused Accept would be a 406."""
    from kubernetes import client

    e2e = clean
    r = cli("job", "create", *e2e.args(), "--runtime", "torch-distributed", "--name", "e2e-logs0", "--suspend")
    assert r.exit_code == 0, r.stderr
    custom = client.CustomObjectsApi(e2e.api)
    jobset = custom.get_namespaced_custom_object("jobset.x-k8s.io", "v1alpha2", e2e.namespace, "jobsets", "e2e-logs0")
    pod = add_pod_of(e2e, "e2e-logs0", jobset)
    try:
        previous = cli("job", "logs", "e2e-logs0", *e2e.args(), "--previous")
        assert previous.exit_code == 1, (previous.stdout, previous.stderr)
        assert "the server says:" in previous.stderr and "406" not in previous.stderr, previous.stderr
        assert "Traceback" not in previous.stderr
    finally:
        client.CoreV1Api(e2e.api).delete_namespaced_pod(pod, e2e.namespace, grace_period_seconds=0)
        assert cli("job", "delete", *e2e.args(), "e2e-logs0").exit_code == 0


@pytest.mark.needs_pods
def test_logs_of_a_finished_job_plain_all_and_follow(cli, clean) -> None:
    """Needs a cluster that runs pods (JobSet controller, nodes); skips where pods never start."""
    e2e = clean
    line = "ktrain-e2e-hello"
    r = cli(
        "job",
        "create",
        *e2e.args(),
        "--runtime",
        "torch-distributed",
        "--name",
        "e2e-logs",
        "--nodes",
        "1",
        "--",
        "python",
        "-c",
        f"print('{line}')",
    )
    assert r.exit_code == 0, r.stderr
    try:
        waited = cli("job", "wait", "e2e-logs", *e2e.args(), "--for", "complete", "--timeout", POD_TIMEOUT)
        if waited.exit_code != 0:
            got = cli("job", "get", "e2e-logs", *e2e.args())
            pytest.skip(
                f"the job's pods did not run to completion within {POD_TIMEOUT} (no JobSet controller or "
                f"no node here?): `job wait` exit {waited.exit_code}; {got.stdout.strip()[:300]}"
            )
        plain = cli("job", "logs", "e2e-logs", *e2e.args())
        assert plain.exit_code == 0 and line in plain.stdout, plain.stderr
        every = cli("job", "logs", "e2e-logs", *e2e.args(), "--all")
        assert every.exit_code == 0 and line in every.stdout, every.stderr
        follow = cli("job", "logs", "e2e-logs", *e2e.args(), "-f")  # a finished pod: prints and returns
        assert follow.exit_code == 0 and line in follow.stdout, follow.stderr
    finally:
        assert cli("job", "delete", *e2e.args(), "e2e-logs", "--wait", "--timeout", "60s").exit_code == 0


# --- issue #19: what a real cluster (with JobSet's webhooks) showed --------------------------------


def _custom(e2e: Any, plural: str, name: str) -> dict[str, Any]:
    from kubernetes import client

    group, version = GROUPS[plural]
    return client.CustomObjectsApi(e2e.api).get_namespaced_custom_object(group, version, e2e.namespace, plural, name)


def test_torchtune_job_is_created_and_resumed(cli, clean) -> None:
    """JobSet's webhook defaults volumeClaimPolicies' retentionPolicy; the resume must not undo it."""
    e2e = clean
    r = cli("job", "create", *e2e.args(), "-r", "torchtune-llama3.2-1b", "--name", "e2e-tt")
    assert r.exit_code == 0, r.stderr
    assert _custom(e2e, "jobsets", "e2e-tt")["spec"]["suspend"] is False
    assert cli("job", "delete", *e2e.args(), "e2e-tt", "--wait", "--timeout", "60s").exit_code == 0


def test_a_suspended_job_is_resumed_and_suspended_again(cli, clean) -> None:
    e2e = clean
    if not has_command("resume"):
        pytest.skip("this ktrain has no `job resume`")
    assert (
        cli("job", "create", *e2e.args(), "-r", "torchtune-llama3.2-1b", "--name", "e2e-sr", "--suspend").exit_code == 0
    )
    assert _custom(e2e, "jobsets", "e2e-sr")["spec"]["suspend"] is True
    r = cli("job", "resume", *e2e.args(), "e2e-sr")
    assert r.exit_code == 0, r.stderr
    assert _custom(e2e, "jobsets", "e2e-sr")["spec"]["suspend"] is False
    r = cli("job", "suspend", *e2e.args(), "e2e-sr")
    assert r.exit_code == 0, r.stderr
    assert _custom(e2e, "jobsets", "e2e-sr")["spec"]["suspend"] is True
    assert cli("job", "delete", *e2e.args(), "e2e-sr", "--wait", "--timeout", "60s").exit_code == 0


def test_trainjob_target_labels_select_the_trainjob(cli, clean) -> None:
    e2e = clean
    r = cli(
        "job",
        "create",
        *e2e.args(),
        "-r",
        "torch-distributed",
        "--name",
        "e2e-lbl",
        "--target",
        "trainjob",
        "-l",
        "team=nlp",
    )
    assert r.exit_code == 0, r.stderr
    assert _custom(e2e, "trainjobs", "e2e-lbl")["metadata"]["labels"]["team"] == "nlp"
    listed = cli("job", "list", *e2e.args(), "-l", "team=nlp", "-o", "name")
    assert listed.stdout == "trainjob.trainer.kubeflow.org/e2e-lbl\n", listed.stderr
    assert cli("job", "delete", *e2e.args(), "-l", "team=nlp", "--yes", "--wait", "--timeout", "60s").exit_code == 0
    assert inventory(e2e) == []


def test_overwrite_server_dry_run_predicts_the_real_overwrite(cli, clean) -> None:
    e2e = clean
    args = [*e2e.args(), "-r", "deepspeed-distributed", "--name", "e2e-ow"]
    assert cli("job", "create", *args, "--nodes", "2").exit_code == 0
    before = inventory(e2e)
    dry = cli("job", "create", *args, "--nodes", "3", "--overwrite", "--dry-run=server")
    assert dry.exit_code == 0, dry.stderr
    assert inventory(e2e) == before
    real = cli("job", "create", *args, "--nodes", "3", "--overwrite")
    assert real.exit_code == 0, real.stderr
    assert cli("job", "delete", *e2e.args(), "e2e-ow", "--wait", "--timeout", "60s").exit_code == 0
