"""Issue #19, what a real cluster showed: each defect against the API-server double, which first
learned the server behaviour that hid it (tests/apiserver/jobset_admission.py)."""

from __future__ import annotations

import contextlib
import json
import os

import pytest

from ktrain.errors import ExitCode

pytestmark = pytest.mark.both_transports  # each test runs through both HTTP clients (conftest)

NS = "team-a"
APPLY = "application/apply-patch+yaml"


def create(cli, kube, *args: str):  # type: ignore[no-untyped-def]
    return cli("job", "create", *kube.args(), *args)


@contextlib.contextmanager
def current_context(kube):  # type: ignore[no-untyped-def]
    """$KUBECONFIG names the double (set on os.environ: the `cli` fixture undoes monkeypatches)."""
    saved = os.environ.get("KUBECONFIG")
    os.environ["KUBECONFIG"] = kube.kubeconfig
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop("KUBECONFIG", None)
        else:
            os.environ["KUBECONFIG"] = saved


# --- 1: torchtune runtimes (volumeClaimPolicies) ----------------------------------------------


def test_double_refuses_a_reapply_that_drops_the_defaulted_retention_policy(kube) -> None:
    """JobSet's webhook defaults retentionPolicy on create; the CRD's `self == oldSelf` rule on
    volumeClaimPolicies refuses a re-apply without it (what `job create` used to send)."""
    from apiserver import ApiError

    srv = kube.srv
    jobset = {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": "vc", "namespace": NS},
        "spec": {
            "suspend": True,
            "volumeClaimPolicies": [{"templates": [{"metadata": {"name": "w"}, "spec": {"accessModes": ["RWO"]}}]}],
            "replicatedJobs": [
                {
                    "name": "node",
                    "template": {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "i"}]}}}},
                }
            ],
        },
    }

    def apply() -> dict:
        rt = srv.resource_type("jobsets")
        return srv.cluster.patch(rt, NS, "vc", APPLY, json.dumps(jobset).encode(), "ktrain", "ktrain").obj

    stored = apply()
    assert stored["spec"]["volumeClaimPolicies"][0]["retentionPolicy"] == {"whenDeleted": "Delete"}
    assert stored["spec"]["successPolicy"] == {"operator": "All"}
    jobset["spec"]["suspend"] = False
    try:
        apply()
    except ApiError as exc:
        assert exc.code == 422
        assert "spec.volumeClaimPolicies: Invalid value: Value is immutable" in exc.message
    else:
        raise AssertionError("the re-apply was accepted")


def test_torchtune_job_is_created_and_resumed_by_changing_only_suspend(cli, kube) -> None:
    r = create(cli, kube, "-r", "torchtune-llama3.2-1b", "--name", "tt")
    assert r.exit_code == 0, r.stderr
    jobset = kube.srv.get_object("jobsets", "tt", NS)
    assert jobset["spec"]["suspend"] is False
    assert jobset["spec"]["volumeClaimPolicies"][0]["retentionPolicy"] == {"whenDeleted": "Delete"}
    resumes = [req for req in kube.srv.requests_for("patch", "jobsets") if req.param("dryRun") is None][-1:]
    assert [req.json() for req in resumes] == [{"spec": {"suspend": False}}]


def test_debug_keeps_exit_codes(cli, kube) -> None:
    r = cli("--debug", "job", "wait", "nope", *kube.args(), "--timeout", "1s")
    assert r.exit_code == ExitCode.NOT_FOUND
    assert "Traceback" in r.stderr and "error: " in r.stderr
    kube.srv.forbid("list", "jobsets")
    r = cli("--debug", "job", "list", *kube.args())
    assert r.exit_code == ExitCode.CLUSTER, r.stderr


# --- 6: --overwrite --dry-run=server predicts the real --overwrite ---------------------------


def test_overwrite_server_dry_run_validates_as_the_real_overwrite_would(cli, kube) -> None:
    first = create(cli, kube, "-r", "deepspeed-distributed", "--name", "ds", "--nodes", "2")
    assert first.exit_code == 0, first.stderr
    before = kube.srv.get_object("jobsets", "ds", NS)
    secret = kube.srv.get_object("secrets", "ds-mpi-ssh-auth", NS)
    # an update of the stored JobSet would change replicatedJobs (the webhook refuses that) and
    # the immutable Secret's key: the real --overwrite deletes first, so neither is met
    dry = create(
        cli, kube, "-r", "deepspeed-distributed", "--name", "ds", "--nodes", "3", "--overwrite", "--dry-run=server"
    )
    assert dry.exit_code == 0, dry.stderr
    assert "would delete the existing job ds first" in dry.stderr
    assert "jobset.jobset.x-k8s.io/ds created (server dry run)" in dry.stdout
    assert kube.srv.get_object("jobsets", "ds", NS) == before
    assert kube.srv.get_object("secrets", "ds-mpi-ssh-auth", NS) == secret
    real = create(cli, kube, "-r", "deepspeed-distributed", "--name", "ds", "--nodes", "3", "--overwrite")
    assert real.exit_code == 0, real.stderr


def test_overwrite_server_dry_run_still_reports_what_a_create_would_refuse(cli, kube) -> None:
    assert create(cli, kube, "-r", "torch-distributed", "--name", "t").exit_code == 0
    kube.srv.forbid("create", "jobsets")
    dry = create(cli, kube, "-r", "torch-distributed", "--name", "t", "--overwrite", "--dry-run=server")
    assert dry.exit_code == ExitCode.CLUSTER
    assert kube.srv.get_object("jobsets", "t", NS) is not None


# --- 2: the background completion refresh is not in completion mode --------------------------


def test_completion_refresh_lists_names_even_when_started_by_the_completer(cli, kube, tmp_path, monkeypatch) -> None:
    import os
    import sys

    from ktrain.completion import refresh as refresh_module
    from ktrain.completion.refresh import refresh

    monkeypatch.setattr(refresh_module, "TIME_LIMIT", 120.0)  # a busy test machine
    assert create(cli, kube, "-r", "torch-distributed", "--name", "t1").exit_code == 0
    monkeypatch.setenv("_KTRAIN_COMPLETE", "bash")  # what the completer's child inherits
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in sys.path if p))
    entry = refresh(str(tmp_path / "entry.json"), ["--kubeconfig", kube.kubeconfig])
    assert entry["jobs"] == ["t1"]


# --- 8: --target trainjob keeps the flags' labels ---------------------------------------------


def test_trainjob_target_stores_the_labels_so_list_and_delete_select_it(cli, kube) -> None:
    r = create(cli, kube, "-r", "torch-distributed", "--name", "tj", "--target", "trainjob", "-l", "team=nlp")
    assert r.exit_code == 0, r.stderr
    trainjob = kube.srv.get_object("trainjobs", "tj", NS)
    assert trainjob["metadata"]["labels"] == {"team": "nlp"}
    assert trainjob["metadata"]["annotations"]["ktrain.io/nodes"] == "1"  # the runtime's default
    listed = cli("job", "list", *kube.args(), "-l", "team=nlp")
    assert listed.exit_code == 0, listed.stderr
    assert listed.stdout.splitlines()[1].split()[:3] == ["tj", "torch-distributed", "1"]
    deleted = cli("job", "delete", *kube.args(), "-l", "team=nlp", "--yes")
    assert deleted.exit_code == 0, deleted.stderr
    assert kube.srv.get_object("trainjobs", "tj", NS) is None


# --- 9: a TrainJob no controller picks up ---------------------------------------------------


def test_get_says_no_jobset_was_made_for_the_trainjob(cli, kube) -> None:
    assert create(cli, kube, "-r", "torch-distributed", "--name", "tj", "--target", "trainjob").exit_code == 0
    got = cli("job", "get", "tj", *kube.args())
    assert got.exit_code == 0, got.stderr
    # the first seconds are the controller's (issue #29: suspected "after a while")
    assert "Why:        Starting: waiting for the Trainer controller to make the JobSet of TrainJob tj" in got.stdout
    trainjob = kube.srv.get_object("trainjobs", "tj", NS)
    trainjob["metadata"]["creationTimestamp"] = "2025-01-01T00:00:00Z"
    kube.srv.put_object(trainjob)
    got = cli("job", "get", "tj", *kube.args())
    assert "Why:        NoTrainerController: no JobSet was made for TrainJob tj in " in got.stdout
    assert ": is the Trainer controller running?" in got.stdout
    assert "JobSet's controller" not in got.stdout


def test_create_trainjob_wait_says_the_controller_is_missing_instead_of_timing_out(cli, kube, monkeypatch) -> None:
    from ktrain.service import job_wait

    monkeypatch.setattr(job_wait, "CONTROLLER_GRACE", 1.0)
    r = create(
        cli, kube, "-r", "torch-distributed", "--name", "tj", "--target", "trainjob", "--wait", "--timeout", "30s"
    )
    assert r.exit_code == ExitCode.CLUSTER, r.stderr
    assert "no JobSet was made for TrainJob tj: is the Trainer controller running?" in r.stderr
    assert "timed out" not in r.stderr


# --- friction: wait says why; --suspend --wait is refused -----------------------------------


def test_wait_says_why_a_job_does_not_start(cli, kube) -> None:
    assert create(cli, kube, "-r", "torch-distributed", "--name", "t").exit_code == 0
    jobset = kube.srv.get_object("jobsets", "t", NS)
    pod = kube.srv.add_pod(
        "t-node-0-0-abcde", NS, labels={"jobset.sigs.k8s.io/jobset-name": "t"}, phase="Pending", owner=jobset
    )
    pod["status"]["conditions"] = [
        {
            "type": "PodScheduled",
            "status": "False",
            "reason": "Unschedulable",
            "message": "0/3 nodes are available: 3 Insufficient nvidia.com/gpu.",
        }
    ]
    kube.srv.put_object(pod)
    r = cli("job", "wait", "t", *kube.args(), "--timeout", "1s")
    assert r.exit_code == ExitCode.TIMEOUT
    # the verdict of `job why` (issue #29); the nodes the scheduler counted are not in the double
    why = "Insufficient: 3 of 3 nodes lack that much nvidia.com/gpu (no node was listed to say more)"
    assert f"waiting: {why}" in r.stderr
    assert f"(it is Created: {why})" in r.stderr


def test_wait_on_a_suspended_job_says_it_is_suspended(cli, kube) -> None:
    assert create(cli, kube, "-r", "torch-distributed", "--name", "t", "--suspend").exit_code == 0
    r = cli("job", "wait", "t", *kube.args(), "--timeout", "1s")
    assert r.exit_code == ExitCode.TIMEOUT
    assert "waiting: Suspended: job t is suspended (spec.suspend: true) and no queue will resume it" in r.stderr


def test_suspend_with_wait_is_refused(cli, kube) -> None:
    r = create(cli, kube, "-r", "torch-distributed", "--name", "t", "--suspend", "--wait")
    assert r.exit_code == ExitCode.USAGE
    assert "--suspend with --wait" in r.stderr
    assert kube.srv.objects("jobsets", NS) == []


# --- 3, 4, 5, 7: runtime resolution -----------------------------------------------------------


def _cluster_runtime(name, kind="ClusterTrainingRuntime", namespace=None, image="x/y:1"):  # type: ignore[no-untyped-def]
    from test_runtime_list import cluster_runtime

    return cluster_runtime(name, kind, namespace=namespace, image=image)


def _image(stdout: str) -> str:
    import yaml

    jobset = next(d for d in yaml.safe_load_all(stdout) if d and d.get("kind") == "JobSet")
    return jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]["image"]


def test_init_and_validate_find_a_runtime_that_only_the_cluster_has(cli, kube) -> None:
    kube.srv.put_object(_cluster_runtime("shared-torch"))
    init = cli("job", "init", "-r", "shared-torch", *kube.args())
    assert init.exit_code == 0, init.stderr
    assert "name: shared-torch" in init.stdout
    valid = cli("job", "validate", "-r", "shared-torch", "--name", "j", *kube.args())
    assert valid.exit_code == 0, valid.stderr
    # without flags: the current context's cluster, for a name found nowhere locally
    with current_context(kube):
        assert cli("job", "init", "-r", "shared-torch").exit_code == 0
        assert cli("job", "validate", "-r", "shared-torch", "--name", "j").exit_code == 0


def test_validate_honours_context_and_kubeconfig(cli, kube) -> None:
    r = cli("job", "validate", "-r", "torch-distributed", "--name", "j", *kube.args(), "--context", "nope")
    assert r.exit_code == ExitCode.USAGE
    assert "context 'nope' not found in kubeconfig" in r.stderr


def test_render_with_an_unknown_context_is_an_error(cli, kube) -> None:
    r = cli("job", "render", "-r", "torch-distributed", *kube.args(), "--context", "nope")
    assert r.exit_code == ExitCode.USAGE
    assert "context 'nope' not found" in r.stderr and r.stdout == ""


def test_job_files_namespace_finds_its_training_runtime(cli, kube, tmp_path) -> None:
    kube.srv.add_namespace("team-b")
    kube.srv.put_object(_cluster_runtime("team-torch", "TrainingRuntime", namespace="team-b"))
    job = tmp_path / "job.yaml"
    job.write_text(
        "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: j, namespace: team-b}\n"
        "spec:\n  runtimeRef: {name: team-torch, kind: TrainingRuntime}\n"
    )
    r = create(cli, kube, "-f", str(job))
    assert r.exit_code == 0, r.stderr
    assert _image_of_stored(kube, "j", "team-b") == "x/y:1"


def _image_of_stored(kube, name: str, ns: str) -> str:  # type: ignore[no-untyped-def]
    jobset = kube.srv.get_object("jobsets", name, ns)
    return jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]["image"]


def test_client_dry_run_resolves_the_runtime_as_create_does(cli, kube) -> None:
    kube.srv.put_object(_cluster_runtime("torch-distributed", image="cluster/torch:1"))
    with current_context(kube):  # no flags
        dry = cli("job", "create", "-r", "torch-distributed", "--name", "t", "--dry-run=client")
        real = cli("job", "create", "-r", "torch-distributed", "--name", "t")
    assert dry.exit_code == 0, dry.stderr
    assert _image(dry.stdout) == "cluster/torch:1"
    assert real.exit_code == 0, real.stderr
    assert _image_of_stored(kube, "t", NS) == "cluster/torch:1"


def test_an_explicit_runtime_file_wins_over_the_clusters_and_says_so(cli, kube, tmp_path) -> None:
    import yaml
    from test_runtime_list import cluster_runtime

    kube.srv.put_object(_cluster_runtime("torch-distributed", image="cluster/torch:1"))
    local = tmp_path / "rt.yaml"
    local.write_text(yaml.safe_dump(cluster_runtime("torch-distributed", image="mine/torch:2")))
    for dry in ("--dry-run=client", "--dry-run=none"):
        r = create(cli, kube, "--runtime-file", str(local), "-r", "torch-distributed", "--name", "t", dry)
        assert r.exit_code == 0, r.stderr
        assert f"from --runtime-file {local}, not the cluster's of the same name" in r.stderr
    assert _image_of_stored(kube, "t", NS) == "mine/torch:2"
    refused = create(
        cli, kube, "--runtime-file", str(local), "-r", "torch-distributed", "--name", "u", "--target", "trainjob"
    )
    assert refused.exit_code == ExitCode.USAGE
    assert "which the Trainer controller would use for this TrainJob" in refused.stderr


def test_runtime_kind_selects_the_namespaced_runtime(cli, kube) -> None:
    kube.srv.put_object(_cluster_runtime("torch", image="cluster/ctr:1"))
    kube.srv.put_object(_cluster_runtime("torch", "TrainingRuntime", namespace=NS, image="ns/tr:1"))
    for how in (("--runtime-kind", "TrainingRuntime"), ("--set", "runtimeRef.kind=TrainingRuntime")):
        r = create(cli, kube, "-r", "torch", "--name", "k", *how, "--target", "trainjob", "--dry-run=client")
        assert r.exit_code == 0, r.stderr
        assert "kind: TrainingRuntime" in r.stdout, how
    r = create(cli, kube, "-r", "torch", "--name", "k", "--runtime-kind", "TrainingRuntime")
    assert r.exit_code == 0, r.stderr
    assert _image_of_stored(kube, "k", NS) == "ns/tr:1"
    bad = create(cli, kube, "-r", "torch", "--runtime-kind", "Nope", "--dry-run=client")
    assert bad.exit_code == ExitCode.USAGE


# --- friction: job suspend / job resume ----------------------------------------------------


def test_suspend_and_resume_change_only_spec_suspend(cli, kube) -> None:
    assert create(cli, kube, "-r", "torchtune-llama3.2-1b", "--name", "tt", "--suspend").exit_code == 0
    kube.srv.clear_requests()
    r = cli("job", "resume", "tt", *kube.args())
    assert (r.exit_code, r.stdout) == (0, "jobset.jobset.x-k8s.io/tt resumed\n"), r.stderr
    assert [req.json() for req in kube.srv.requests_for("patch", "jobsets")] == [{"spec": {"suspend": False}}]
    assert kube.srv.get_object("jobsets", "tt", NS)["spec"]["suspend"] is False
    again = cli("job", "resume", "tt", *kube.args())
    assert again.stdout == "jobset.jobset.x-k8s.io/tt resumed (no change)\n"
    r = cli("job", "suspend", "tt", *kube.args())
    assert (r.exit_code, r.stdout) == (0, "jobset.jobset.x-k8s.io/tt suspended\n"), r.stderr
    assert kube.srv.get_object("jobsets", "tt", NS)["spec"]["suspend"] is True
    missing = cli("job", "resume", "nope", *kube.args())
    assert missing.exit_code == ExitCode.NOT_FOUND


def test_resume_of_a_trainjob_patches_the_trainjob(cli, kube) -> None:
    r = create(cli, kube, "-r", "torch-distributed", "--name", "tj", "--target", "trainjob", "--suspend")
    assert r.exit_code == 0, r.stderr
    r = cli("job", "resume", "tj", *kube.args())
    assert r.stdout == "trainjob.trainer.kubeflow.org/tj resumed\n", r.stderr
    assert kube.srv.get_object("trainjobs", "tj", NS)["spec"]["suspend"] is False


# --- friction: runtime show -o yaml of a cluster runtime has no server fields -----------------


def test_runtime_show_of_a_cluster_runtime_can_be_applied_elsewhere(cli, kube) -> None:
    import yaml

    runtime = _cluster_runtime("shared-torch")
    runtime["metadata"]["annotations"] = {"kubectl.kubernetes.io/last-applied-configuration": "{}", "team": "ml"}
    kube.srv.put_object(runtime)
    r = cli("runtime", "show", "shared-torch", *kube.args(), "-o", "yaml")
    assert r.exit_code == 0, r.stderr
    meta = yaml.safe_load(r.stdout)["metadata"]
    assert meta == {"name": "shared-torch", "labels": runtime["metadata"]["labels"], "annotations": {"team": "ml"}}


# --- friction: 403 messages -------------------------------------------------------------------


def test_a_forbidden_create_says_so_once_and_a_hidden_trainjob_kind_is_no_failure(cli, kube) -> None:
    kube.srv.forbid("get", "trainjobs")  # a user with JobSet rights only
    kube.srv.forbid("patch", "jobsets")
    r = create(cli, kube, "-r", "torch-distributed", "--name", "t")
    assert r.exit_code == ExitCode.CLUSTER
    assert r.stderr.startswith('error: jobsets.jobset.x-k8s.io "t" is forbidden: User ')
    assert r.stderr.count("forbidden") == 1 and "TrainJob" not in r.stderr
    assert "a namespace you may write to" in r.stderr
    kube.srv.clear_faults()
    kube.srv.forbid("get", "trainjobs")
    ok = create(cli, kube, "-r", "torch-distributed", "--name", "t")
    assert ok.exit_code == 0, ok.stderr


# --- friction: small messages --------------------------------------------------------------


def test_insecure_context_gives_one_ktrain_warning(cli, tmp_path) -> None:
    import yaml

    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:1", "insecure-skip-tls-verify": True}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "c",
    }
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(config))
    r = cli("job", "list", "--kubeconfig", str(path), "--request-timeout", "2")
    assert r.exit_code == ExitCode.CLUSTER
    assert r.stderr.count("warning: TLS verification is off for context 'c' (insecure-skip-tls-verify)") == 1
    assert "InsecureRequestWarning" not in r.stderr


def test_runtime_file_without_runtime_says_which_to_pick(cli, kube, tmp_path) -> None:
    import yaml
    from test_runtime_list import cluster_runtime

    local = tmp_path / "rt.yaml"
    local.write_text(yaml.safe_dump(cluster_runtime("my-torch")))
    r = create(cli, kube, "--runtime-file", str(local))
    assert r.exit_code == ExitCode.USAGE
    assert "no job given" in r.stderr and "job render" not in r.stderr
    assert "hint: --runtime-file defines my-torch: pick one with --runtime my-torch" in r.stderr


def test_get_labels_the_units_of_replicated_jobs(cli, kube) -> None:
    assert create(cli, kube, "-r", "torch-distributed", "--name", "t", "--nodes", "2").exit_code == 0
    r = cli("job", "get", "t", *kube.args())
    assert r.exit_code == 0, r.stderr
    header = next(line for line in r.stdout.splitlines() if "PODS/JOB" in line)
    assert header.split("  ") and [h.strip() for h in header.split("  ") if h.strip()] == [
        "NAME",
        "STEP",
        "PODS/JOB",
        "READY JOBS",
        "ACTIVE JOBS",
        "SUCCEEDED JOBS",
        "FAILED JOBS",
    ]


def test_a_template_value_no_template_variable_uses_is_a_warning(cli, tmp_path) -> None:
    from unit.authoring.test_templating import TEMPLATE

    template = tmp_path / "job.yaml.j2"
    template.write_text(TEMPLATE)
    args = ["-f", str(template), "--set", "name=demo", "--set", "nodes=2", "--set", "optim.lr=1e-3"]
    r = cli("job", "render", *args, "--set", "nodez=3", "-o", "name")
    assert r.exit_code == 0, r.stderr
    assert f"warning: --set nodez: {template} uses no template variable 'nodez', the value is ignored" in r.stderr
    assert "(did you mean 'nodes'?)" in r.stderr
    clean = cli("job", "validate", *args)
    assert clean.exit_code == 0 and "warning" not in clean.stderr, clean.stderr
    warned = cli("job", "validate", *args, "--set", "nodez=3")
    assert warned.exit_code == 0 and "no template variable 'nodez'" in warned.stderr


def test_namespace_completion_offers_the_clusters_namespaces(kube, tmp_path, monkeypatch) -> None:
    from ktrain.completion import values
    from ktrain.completion.complete import answer
    from ktrain.completion.refresh import refresh

    kube.srv.add_namespace("ml-research")
    monkeypatch.setenv("KTRAIN_CACHE_DIR", str(tmp_path / "cache"))
    given = {"--kubeconfig": [kube.kubeconfig]}
    entry_path = values._cluster_entry_path(values.connection_args(given))
    os.makedirs(os.path.dirname(entry_path), exist_ok=True)
    # the refresh lists them (the CLI is not needed for that: a fake one answers nothing)
    entry = refresh(entry_path, ["--kubeconfig", kube.kubeconfig], cli=["false"])
    assert {"ml-research", "team-a", "default"} <= set(entry["namespaces"])  # type: ignore[arg-type]
    monkeypatch.setattr(values, "_start_refresh", lambda *a: None)
    from ktrain.completion.tree import load_tree

    offered = [v for v, _ in answer(load_tree(), f"ktrain job list --kubeconfig {kube.kubeconfig} -n ").items]
    assert "ml-research" in offered


def test_get_json_says_why_the_job_waits(cli, kube) -> None:
    assert create(cli, kube, "-r", "torch-distributed", "--name", "tj", "--target", "trainjob").exit_code == 0
    doc = json.loads(cli("job", "get", "tj", *kube.args(), "-o", "json").stdout)
    assert doc["waiting"].startswith("no JobSet was made for TrainJob tj")


def test_wait_on_an_old_trainjob_without_a_jobset_fails_at_once(cli, kube) -> None:
    kube.srv.put_object(
        {
            "apiVersion": "trainer.kubeflow.org/v1alpha1",
            "kind": "TrainJob",
            "metadata": {"name": "old", "namespace": NS, "creationTimestamp": "2020-01-01T00:00:00Z"},
            "spec": {"runtimeRef": {"name": "torch-distributed"}},
        }
    )
    r = cli("job", "wait", "old", *kube.args(), "--timeout", "30s")
    assert r.exit_code == ExitCode.CLUSTER, r.stderr
    assert "is the Trainer controller running?" in r.stderr


def test_wait_names_a_scheduler_that_never_looks_at_the_pods(cli, kube) -> None:
    assert create(cli, kube, "-r", "torch-distributed", "--name", "t").exit_code == 0
    jobset = kube.srv.get_object("jobsets", "t", NS)
    pod = kube.srv.add_pod(
        "t-node-0-0-abcde", NS, labels={"jobset.sigs.k8s.io/jobset-name": "t"}, phase="Pending", owner=jobset
    )
    pod["metadata"]["creationTimestamp"] = "2020-01-01T00:00:00Z"
    pod["spec"]["schedulerName"] = "volcano"
    pod["status"].pop("containerStatuses")  # never bound to a node: no kubelet reported on it
    kube.srv.put_object(pod)
    r = cli("job", "wait", "t", *kube.args(), "--timeout", "1s")
    assert r.exit_code == ExitCode.TIMEOUT
    # the verdict of `job why` (issue #29)
    assert "waiting: NoScheduler: scheduler volcano has not looked at pod t-node-0-0-abcde in " in r.stderr
    assert ": is it running?" in r.stderr
