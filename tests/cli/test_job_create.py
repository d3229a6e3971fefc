"""`ktrain job create` against the API-server double: what is stored, in which order, and
what is left when something fails (nothing)."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from apiserver import ApiServerDouble
from gang_runtimes import COSCHEDULING, VOLCANO, write_runtime

pytestmark = pytest.mark.both_transports  # each test runs through both HTTP clients (conftest)

NS = "team-a"
COMPANION_TYPES = (
    "configmaps",
    "secrets",
    "jobsets",
    "podgroups.scheduling.x-k8s.io",
    "podgroups.scheduling.volcano.sh",
    "trainjobs",
)


def stored(srv: ApiServerDouble, ns: str = NS) -> dict[str, list[str]]:
    out = {}
    for rtype in COMPANION_TYPES:
        plural, _, group = rtype.partition(".")
        names = sorted(o["metadata"]["name"] for o in srv.objects(plural, ns, group or None))
        if names:
            out[rtype] = names
    return out


def create(cli, kube, *args: str):  # type: ignore[no-untyped-def]
    return cli("job", "create", *kube.args(), *args)


def test_torch_job_is_applied_in_the_context_namespace_and_resumed(cli, kube) -> None:
    r = create(cli, kube, "--runtime", "torch-distributed", "--name", "t1", "--nodes", "2", "--", "torchrun", "x.py")
    assert r.exit_code == 0, r.stderr
    assert r.stdout == "jobset.jobset.x-k8s.io/t1 created\n"
    jobset = kube.srv.get_object("jobsets", "t1", NS)
    assert jobset["spec"]["suspend"] is False
    assert jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["parallelism"] == 2
    applies = kube.srv.requests_for("apply", "jobsets")
    assert [req.param("fieldManager") for req in applies] == ["ktrain"] * 2
    # a server dry run first, then applied suspended, then resumed: a merge patch of spec.suspend
    # alone (issue #19: a re-apply would re-send what the server defaulted)
    assert [(req.param("dryRun"), req.json()["spec"]["suspend"]) for req in applies] == [
        ("All", True),
        (None, True),
    ]
    (resume,) = kube.srv.requests_for("patch", "jobsets")
    assert (resume.param("fieldManager"), resume.json()) == ("ktrain", {"spec": {"suspend": False}})
    assert jobset["metadata"]["managedFields"][0]["manager"] == "ktrain"
    # the runtime is recorded on the JobSet, so `job list` can name it
    assert jobset["metadata"]["annotations"]["ktrain.io/runtime"] == "torch-distributed"
    listed = cli("job", "list", *kube.args())
    assert listed.exit_code == 0, listed.stderr
    assert listed.stdout.splitlines()[1].split()[:3] == ["t1", "torch-distributed", "2"]


def test_deepspeed_companions_are_owned_by_the_jobset_and_the_key_is_not_printed(cli, kube) -> None:
    r = create(
        cli,
        kube,
        "--runtime",
        "deepspeed-distributed",
        "--name",
        "ds",
        "--nodes",
        "3",
        "--",
        "mpirun",
        "python",
        "train.py",
    )
    assert r.exit_code == 0, r.stderr
    assert r.stdout.splitlines() == [
        "secret/ds-mpi-ssh-auth created",
        "configmap/ds-mpi-hostfile created",
        "jobset.jobset.x-k8s.io/ds created",
    ]
    assert "PRIVATE KEY" not in r.stdout + r.stderr and "ssh-privatekey" not in r.stdout
    jobset = kube.srv.get_object("jobsets", "ds", NS)
    for plural, name in (("secrets", "ds-mpi-ssh-auth"), ("configmaps", "ds-mpi-hostfile")):
        (ref,) = kube.srv.get_object(plural, name, NS)["metadata"]["ownerReferences"]
        assert ref == {
            "apiVersion": "jobset.x-k8s.io/v1alpha2",
            "kind": "JobSet",
            "name": "ds",
            "uid": jobset["metadata"]["uid"],
            "controller": True,
            "blockOwnerDeletion": True,
        }
    # the JobSet exists (suspended) before anything that points at it
    order = [
        (req.verb, req.resource.split(".")[0], req.param("dryRun"))
        for req in kube.srv.requests
        if req.verb in ("apply", "patch")
    ]
    assert order == [
        ("apply", "jobsets", "All"),
        ("apply", "secrets", "All"),
        ("apply", "configmaps", "All"),
        ("apply", "jobsets", None),
        ("apply", "secrets", None),
        ("apply", "configmaps", None),
        ("patch", "jobsets", None),
    ]


def test_output_yaml_shows_the_stored_objects_and_warns_about_the_key(cli, kube) -> None:
    r = create(cli, kube, "--runtime", "deepspeed-distributed", "--name", "ds", "-o", "json")
    assert r.exit_code == 0, r.stderr
    items = json.loads(r.stdout)["items"]
    assert [i["kind"] for i in items] == ["Secret", "ConfigMap", "JobSet"]
    assert all(i["metadata"]["uid"] and "managedFields" not in i["metadata"] for i in items)
    assert "SSH private key" in r.stderr


@pytest.mark.parametrize("which, group", [(VOLCANO, "scheduling.volcano.sh"), (COSCHEDULING, "scheduling.x-k8s.io")])
def test_gang_scheduled_runtime_creates_its_podgroup(cli, kube, tmp_path: Path, which, group) -> None:
    runtime = write_runtime(tmp_path, which)
    r = create(
        cli,
        kube,
        "--runtime-file",
        str(runtime),
        "--runtime",
        which[0],
        "--name",
        "g",
        "--nodes",
        "2",
        "--queue",
        "gpu",
        "--",
        "torchrun",
        "x.py",
    )
    assert r.exit_code == 0, r.stderr
    (podgroup,) = kube.srv.objects("podgroups", NS, group)
    assert podgroup["metadata"]["name"] == "g" and podgroup["spec"]["minMember"] == 2
    assert podgroup["metadata"]["ownerReferences"][0]["kind"] == "JobSet"
    if group == "scheduling.volcano.sh":
        assert podgroup["spec"]["queue"] == "gpu"


def test_dry_run_server_validates_every_object_and_stores_nothing(cli, kube) -> None:
    r = create(cli, kube, "--runtime", "deepspeed-distributed", "--name", "ds", "--dry-run=server")
    assert r.exit_code == 0, r.stderr
    assert r.stdout.splitlines()[-1] == "jobset.jobset.x-k8s.io/ds created (server dry run)"
    applies = kube.srv.requests_for("apply")
    assert len(applies) == 3 and all(req.param("dryRun") == "All" for req in applies)
    assert stored(kube.srv) == {}


def test_dry_run_client_renders_in_the_context_namespace_without_writing(cli, kube) -> None:
    r = create(cli, kube, "--runtime", "torch-distributed", "--name", "t", "--dry-run=client", "-o", "name")
    assert r.exit_code == 0, r.stderr
    assert r.stdout == "jobset.jobset.x-k8s.io/t\n"
    assert kube.srv.requests_for("apply") == [] and stored(kube.srv) == {}


def test_existing_job_is_an_error_unless_overwrite(cli, kube) -> None:
    assert create(cli, kube, "--runtime", "deepspeed-distributed", "--name", "ds").exit_code == 0
    first_uid = kube.srv.get_object("jobsets", "ds", NS)["metadata"]["uid"]
    again = create(cli, kube, "--runtime", "deepspeed-distributed", "--name", "ds")
    assert again.exit_code == 5
    assert "jobset.jobset.x-k8s.io/ds already exists in namespace team-a" in again.stderr
    assert "--overwrite" in again.stderr
    replaced = create(cli, kube, "--runtime", "deepspeed-distributed", "--name", "ds", "--nodes", "2", "--overwrite")
    assert replaced.exit_code == 0, replaced.stderr
    jobset = kube.srv.get_object("jobsets", "ds", NS)
    assert jobset["metadata"]["uid"] != first_uid
    secret = kube.srv.get_object("secrets", "ds-mpi-ssh-auth", NS)
    assert secret["metadata"]["ownerReferences"][0]["uid"] == jobset["metadata"]["uid"]


def test_409_from_the_server_is_reported_and_nothing_is_left(cli, kube) -> None:
    kube.srv.fail_nth("apply", "configmaps", 2, code=409)  # the real apply, after the dry run passed
    r = create(cli, kube, "--runtime", "deepspeed-distributed", "--name", "ds")
    assert r.exit_code == 5
    assert "ConfigMap team-a/ds-mpi-hostfile" in r.stderr and "the object has been modified" in r.stderr
    assert "rolled back 2 created object(s)" in r.stderr
    assert stored(kube.srv) == {}


def test_422_on_the_jobset_after_the_configmap_was_made_rolls_everything_back(cli, kube) -> None:
    # the resume (after the dry run and the create) fails: the Secret and ConfigMap exist by then
    kube.srv.fail_nth("patch", "jobsets", 3, code=422, message="spec.replicatedJobs is immutable")
    r = create(cli, kube, "--runtime", "deepspeed-distributed", "--name", "ds")
    assert r.exit_code == 5
    assert "JobSet team-a/ds" in r.stderr and "spec.replicatedJobs is immutable" in r.stderr
    assert "nothing was left on the cluster (rolled back 3 created object(s))" in r.stderr
    assert stored(kube.srv) == {}
    deletes = [req.resource.split(".")[0] for req in kube.srv.requests_for("delete")]
    assert deletes == ["configmaps", "secrets", "jobsets"]  # newest first


@pytest.mark.shared  # the double refuses the object by the JobSet CRD's schema
def test_object_the_crd_schema_rejects_is_a_clear_error_and_nothing_is_left(cli, kube, tmp_path: Path) -> None:
    runtime = write_runtime(tmp_path, COSCHEDULING)
    runtime.write_text(
        runtime.read_text().replace(
            "                  containers:\n",
            '                  securityContext:\n                    runAsUser: "yes"\n                  containers:\n',
            1,
        )
    )
    r = create(cli, kube, "--runtime-file", str(runtime), "--runtime", COSCHEDULING[0], "--name", "bad")
    assert r.exit_code == 5, r.stdout
    assert 'JobSet.jobset.x-k8s.io "bad" is invalid: spec.replicatedJobs[0].template.spec.template.spec' in r.stderr
    assert "securityContext.runAsUser" in r.stderr
    assert "Traceback" not in r.stderr and stored(kube.srv) == {}
    # caught by the preflight dry run: nothing was written, so nothing had to be rolled back
    assert all(req.param("dryRun") == "All" for req in kube.srv.requests_for("apply"))
    assert kube.srv.requests_for("delete") == []


def test_forbidden_says_who_may_not_do_what(cli, kube) -> None:
    kube.srv.forbid("apply", "jobsets")
    r = create(cli, kube, "--runtime", "torch-distributed", "--name", "t")
    assert r.exit_code == 5
    assert 'forbidden: User "system:serviceaccount:default:ktrain" cannot patch resource "jobsets"' in r.stderr
    assert "RBAC" in r.stderr
    assert stored(kube.srv) == {}


def test_server_down_is_one_line_with_what_to_do(cli, kube) -> None:
    kube.srv.stop()
    r = create(cli, kube, "--runtime", "torch-distributed", "--name", "t")
    assert r.exit_code == 5
    assert r.stderr.startswith("error: cannot reach the API server at http://127.0.0.1:")
    assert "connection refused" in r.stderr and "hint:" in r.stderr and "Traceback" not in r.stderr


def test_slow_server_times_out_with_the_request_timeout(cli, kube) -> None:
    kube.srv.slow(3.0, verb="apply")
    r = create(cli, kube, "--runtime", "torch-distributed", "--name", "t", "--request-timeout", "0.5")
    assert r.exit_code == 5
    assert "did not answer within 0.5s" in r.stderr


def test_missing_crd_names_it_and_how_to_install_it(cli, tmp_path: Path) -> None:
    with ApiServerDouble(crds={"coscheduling"}) as srv:
        kc = srv.write_kubeconfig(tmp_path / "kc")
        runtime = write_runtime(tmp_path, VOLCANO)
        r = cli(
            "job",
            "create",
            "--kubeconfig",
            str(kc),
            "--runtime-file",
            str(runtime),
            "--runtime",
            VOLCANO[0],
            "--name",
            "v",
        )
        assert r.exit_code == 5
        assert "does not serve JobSet (jobset.x-k8s.io/v1alpha2), PodGroup (scheduling.volcano.sh/v1beta1)" in r.stderr
        assert "jobset/releases/download/v0.12.0/manifests.yaml" in r.stderr and "volcano" in r.stderr
        assert srv.requests_for("apply") == []


def test_target_trainjob_submits_the_trainjob_only(cli, kube) -> None:
    r = create(
        cli,
        kube,
        "--runtime",
        "deepspeed-distributed",
        "--name",
        "tj",
        "--target",
        "trainjob",
        "--show-render",
        "--",
        "mpirun",
        "x",
    )
    assert r.exit_code == 0, r.stderr
    assert r.stdout.endswith("trainjob.trainer.kubeflow.org/tj created\n")
    assert "<generated by the Trainer controller>" in r.stdout  # the preview's Secret is masked
    assert "is not on the cluster" in r.stderr  # the controller would not find a bundled runtime
    assert stored(kube.srv) == {"trainjobs": ["tj"]}
    trainjob = kube.srv.get_object("trainjobs", "tj", NS)
    assert trainjob["spec"]["runtimeRef"]["name"] == "deepspeed-distributed"


def test_cluster_runtime_wins_over_the_bundled_one_for_create(cli, kube) -> None:
    runtime = _bundled_runtime("torch-distributed")
    runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0][
        "image"
    ] = "registry.example/cluster-torch:1"
    kube.srv.put_object(runtime)
    r = create(cli, kube, "--runtime", "torch-distributed", "--name", "t", "--target", "trainjob")
    assert r.exit_code == 0, r.stderr
    assert "is not on the cluster" not in r.stderr
    r = create(cli, kube, "--runtime", "torch-distributed", "--name", "t2", "-o", "yaml")
    assert "registry.example/cluster-torch:1" in r.stdout


def test_wait_returns_when_the_jobset_completes_and_fails_when_it_fails(cli, kube) -> None:
    def finish(name: str, condition: str) -> None:
        for _ in range(500):  # as the JobSet controller would: once the job runs (resumed)
            jobset = kube.srv.get_object("jobsets", name, NS)
            if jobset is not None and jobset["spec"]["suspend"] is False:
                break
            threading.Event().wait(0.02)
        kube.srv.set_status(
            "jobsets",
            name,
            {
                "conditions": [
                    {
                        "type": condition,
                        "status": "True",
                        "reason": "X",
                        "message": "done",
                        "lastTransitionTime": "2026-01-01T00:00:00Z",
                    }
                ]
            },
            NS,
        )

    t = threading.Thread(target=finish, args=("w1", "Completed"))
    t.start()
    r = create(cli, kube, "--runtime", "torch-distributed", "--name", "w1", "--wait", "--timeout", "20s")
    t.join()
    assert r.exit_code == 0, r.stderr
    assert "job w1 Complete" in r.stderr
    t = threading.Thread(target=finish, args=("w2", "Failed"))
    t.start()
    r = create(cli, kube, "--runtime", "torch-distributed", "--name", "w2", "--wait", "--timeout", "20s")
    t.join()
    assert r.exit_code == 1 and "job w2 is Failed" in r.stderr and "X: done" in r.stderr


def test_follow_streams_the_trainer_logs_until_the_job_ends(cli, kube) -> None:
    # The pod still runs when the JobSet completes (as DeepSpeed's sshd workers do): following must end
    # with the job, not hang on the open log stream.
    from ktrain import constants as c

    def run_job() -> None:  # the JobSet and Job controllers, then the kubelet, as seen from the API
        for _ in range(500):
            jobset = kube.srv.get_object("jobsets", "f1", NS)
            if jobset is not None and jobset["spec"]["suspend"] is False:
                break
            threading.Event().wait(0.02)
        kube.srv.add_pod(
            "f1-node-0-0-abcde",
            NS,
            containers=["node"],
            owner=jobset,
            labels={c.JOBSET_NAME_LABEL: "f1", c.JOBSET_RJOB_NAME_LABEL: "node", c.JOBSET_JOB_INDEX_LABEL: "0"},
            annotations={c.JOB_COMPLETION_INDEX_ANNOTATION: "0"},
        )
        kube.srv.append_log("f1-node-0-0-abcde", "epoch 1 loss 0.5\n", namespace=NS)
        threading.Event().wait(0.5)
        kube.srv.set_status(
            "jobsets",
            "f1",
            {
                "conditions": [
                    {
                        "type": "Completed",
                        "status": "True",
                        "reason": "AllJobsCompleted",
                        "message": "done",
                        "lastTransitionTime": "2026-01-01T00:00:00Z",
                    }
                ]
            },
            NS,
        )

    t = threading.Thread(target=run_job)
    t.start()
    r = create(cli, kube, "--runtime", "torch-distributed", "--name", "f1", "--follow", "--wait", "--timeout", "30s")
    t.join()
    assert r.exit_code == 0, r.stderr
    assert "epoch 1 loss 0.5" in r.stdout
    assert "job f1 Complete" in r.stderr


def test_namespace_flag_must_match_the_file(cli, kube, tmp_path: Path) -> None:
    job = tmp_path / "job.yaml"
    job.write_text(
        "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata:\n  name: f\n"
        "  namespace: other\nspec:\n  runtimeRef:\n    name: torch-distributed\n"
    )
    r = create(cli, kube, "-f", str(job), "-n", NS)
    assert r.exit_code == 2 and "does not match the namespace" in r.stderr


def _bundled_runtime(name: str) -> dict:
    import yaml

    from ktrain.inputs.bundled import builtin_runtimes_dir

    return yaml.safe_load((builtin_runtimes_dir() / f"{name}.yaml").read_text())


def test_trainjob_target_needs_the_trainer_crds(cli, tmp_path: Path) -> None:
    with ApiServerDouble(crds={"jobset"}) as srv:
        kc = srv.write_kubeconfig(tmp_path / "kc")
        r = cli("job", "create", "--kubeconfig", str(kc), "--runtime", "torch-distributed", "--target", "trainjob")
        assert r.exit_code == 5
        assert "does not serve TrainJob (trainer.kubeflow.org/v1alpha1)" in r.stderr
        assert "kubeflow/trainer.git/manifests/base/crds?ref=v2.3.0" in r.stderr


def test_runtimes_we_may_not_list_are_mentioned_only_when_the_name_is_unknown(cli, kube) -> None:
    kube.srv.forbid("list", "clustertrainingruntimes")
    ok = create(cli, kube, "--runtime", "torch-distributed", "--name", "t")
    assert ok.exit_code == 0 and ok.stderr == ""
    unknown = create(cli, kube, "--runtime", "site-torch", "--name", "u")
    assert unknown.exit_code == 4
    assert "'site-torch' not found" in unknown.stderr and "cannot list ClusterTrainingRuntimes" in unknown.stderr
