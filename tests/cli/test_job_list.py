"""`ktrain job list` through the CLI, against the API-server double."""

from __future__ import annotations

import json

import pytest
from apiserver import ApiServerDouble
from cli import jobs_double
from cli.jobs_double import COMPLETED, FAILED, pod, seed

from ktrain import constants as c
from ktrain.errors import ExitCode

# Both HTTP clients (conftest); the API-server double (conftest `srv`); fast polling.
# The API-server double and its kubeconfig, and fast polling (tests/cli/jobs_double.py).
srv, kc, fast_polling = jobs_double.srv, jobs_double.kc, jobs_double.fast_polling
pytestmark = [pytest.mark.both_transports, pytest.mark.double, pytest.mark.usefixtures("fast_polling")]


# --- list -----------------------------------------------------------------------------------------


def test_list_shows_each_state_of_engine_spec_section_10(srv, kc, cli) -> None:
    created = seed(srv, "created")
    pod(srv, created, rank=0, phase="Running")
    pod(srv, created, rank=1, phase="Pending")  # 1 of 2 trainer pods: still Created
    running = seed(srv, "running")
    pod(srv, running, rank=0)
    pod(srv, running, rank=1, phase="Succeeded")  # Running or Succeeded count
    seed(srv, "suspended", suspend=True)
    seed(srv, "complete")
    srv.set_status("jobsets", "complete", {"conditions": [COMPLETED], "terminalState": "Completed"})
    seed(srv, "failed")
    srv.set_status("jobsets", "failed", {"conditions": [FAILED], "terminalState": "Failed"})

    r = cli("job", "list", "--kubeconfig", kc)

    assert r.exit_code == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].split() == ["NAME", "RUNTIME", "NODES", "STATE", "RESTARTS", "AGE", "PROGRESS", "ETA"]
    rows = {line.split()[0]: line.split() for line in lines[1:]}
    assert {name: row[3] for name, row in rows.items()} == {
        "complete": "Complete",
        "created": "Created",
        "failed": "Failed",
        "running": "Running",
        "suspended": "Suspended",
    }
    assert rows["running"][1:3] == ["-", "2"]  # ktrain's JobSets carry no runtime name
    assert {row[4] for row in rows.values()} == {"0"}  # no failure policy: a JobSet that never restarts
    assert rows["running"][5].endswith("s")  # AGE, kubectl style


def test_list_shows_a_trainjob_once_with_its_runtime_and_skips_foreign_jobsets(srv, kc, cli) -> None:
    trainjob = srv.put_object(
        {
            "apiVersion": c.TRAINER_API_VERSION,
            "kind": "TrainJob",
            "metadata": {"name": "tj", "namespace": "default"},
            "spec": {"runtimeRef": {"name": "torch-distributed"}, "trainer": {"numNodes": 3}},
        }
    )
    owned = seed(srv, "tj", nodes=3)
    owned["metadata"]["ownerReferences"] = [
        {
            "apiVersion": c.TRAINER_API_VERSION,
            "kind": "TrainJob",
            "name": "tj",
            "uid": trainjob["metadata"]["uid"],
            "controller": True,
        }
    ]
    srv.put_object(owned)
    srv.put_object(
        {
            "apiVersion": c.JOBSET_API_VERSION,
            "kind": "JobSet",
            "metadata": {"name": "not-training", "namespace": "default"},
            "spec": {
                "replicatedJobs": [
                    {
                        "name": "web",
                        "template": {
                            "spec": {"template": {"spec": {"containers": [{"name": "web", "image": "nginx"}]}}}
                        },
                    }
                ]
            },
        }
    )

    r = cli("job", "list", "--kubeconfig", kc, "-o", "wide")

    assert r.exit_code == 0, r.stderr
    rows = [line.split() for line in r.stdout.splitlines()[1:]]
    assert [row[:6] for row in rows] == [["tj", "torch-distributed", "3", "Created", "0", rows[0][5]]]
    assert rows[0][6:10] == ["-", "-", "TrainJob", "0/3"]  # no progress reported: PROGRESS and ETA are -


def test_restarts_are_the_jobsets_against_its_budget_from_the_lists_already_made(srv, kc, cli) -> None:
    """RESTARTS (issue #35): `status.restarts` and `restartsCountTowardsMax` of `maxRestarts`; a
    TrainJob's from its JobSet; `-` before the JobSet exists. No request beyond the three lists."""
    for name, restarts, counted in (("loop", 3, 3), ("preempted", 2, 1)):
        js = seed(srv, name)
        js["spec"]["failurePolicy"] = {"maxRestarts": 5}
        srv.put_object(js)
        srv.set_status("jobsets", name, {"restarts": restarts, "restartsCountTowardsMax": counted})
    srv.put_object(
        {
            "apiVersion": c.TRAINER_API_VERSION,
            "kind": "TrainJob",
            "metadata": {"name": "waiting", "namespace": "default"},
            "spec": {"runtimeRef": {"name": "torch-distributed"}},
        }
    )
    srv.clear_requests()

    r = cli("job", "list", "--kubeconfig", kc)

    assert r.exit_code == 0, r.stderr
    cells = {
        line.split()[0]: line[r.stdout.index("RESTARTS") :].split("  ")[0].strip() for line in r.stdout.splitlines()[1:]
    }
    assert cells == {"loop": "3/5", "preempted": "2 (1/5)", "waiting": "-"}
    assert [(q.verb, q.resource) for q in srv.requests_for()] == [
        ("list", "jobsets.jobset.x-k8s.io"),
        ("list", "trainjobs.trainer.kubeflow.org"),
        ("list", "pods"),
    ]
    doc = json.loads(cli("job", "list", "--kubeconfig", kc, "-o", "json").stdout)
    loop = next(item for item in doc["items"] if item["metadata"]["name"] == "loop")
    assert (loop["status"]["restarts"], loop["status"]["restartsCountTowardsMax"]) == (3, 3)  # as served


def test_list_all_namespaces_adds_the_namespace_column(srv, kc, cli) -> None:
    srv.add_namespace("team-b")
    seed(srv, "here")
    seed(srv, "there", namespace="team-b")

    mine = cli("job", "list", "--kubeconfig", kc)
    every = cli("job", "list", "--kubeconfig", kc, "-A")
    other = cli("job", "list", "--kubeconfig", kc, "-n", "team-b", "-o", "name")

    assert [line.split()[0] for line in mine.stdout.splitlines()[1:]] == ["here"]
    assert every.stdout.splitlines()[0].split()[:2] == ["NAMESPACE", "NAME"]
    assert [line.split()[:2] for line in every.stdout.splitlines()[1:]] == [["default", "here"], ["team-b", "there"]]
    assert other.stdout == "jobset.jobset.x-k8s.io/there\n"


def test_list_selector_and_name_output_for_completion(srv, kc, cli) -> None:
    seed(srv, "nlp-1", labels={"team": "nlp"})
    seed(srv, "vision-1", labels={"team": "vision"})
    srv.put_object(
        {
            "apiVersion": c.TRAINER_API_VERSION,
            "kind": "TrainJob",
            "metadata": {"name": "nlp-2", "namespace": "default", "labels": {"team": "nlp"}},
            "spec": {"runtimeRef": {"name": "torch-distributed"}},
        }
    )

    r = cli("job", "list", "--kubeconfig", kc, "-l", "team=nlp", "-o", "name")

    assert r.exit_code == 0, r.stderr
    assert r.stdout == "jobset.jobset.x-k8s.io/nlp-1\ntrainjob.trainer.kubeflow.org/nlp-2\n"


def test_list_json_is_a_kubectl_list_of_the_objects(srv, kc, cli) -> None:
    seed(srv, "demo")
    r = cli("job", "list", "--kubeconfig", kc, "-o", "json")
    doc = json.loads(r.stdout)
    assert doc["kind"] == "List" and [i["metadata"]["name"] for i in doc["items"]] == ["demo"]
    assert doc["items"][0]["kind"] == "JobSet"


def test_list_in_an_empty_namespace_says_so_on_stderr(srv, kc, cli) -> None:
    r = cli("job", "list", "--kubeconfig", kc)
    assert (r.exit_code, r.stdout) == (0, "")
    assert r.stderr == "No training jobs found in namespace default.\n"


def test_server_down_is_a_one_line_cluster_error(srv, kc, cli) -> None:
    srv.stop()
    r = cli("job", "list", "--kubeconfig", kc)
    assert r.exit_code == ExitCode.CLUSTER
    assert r.stderr.startswith("error: cannot reach the API server at http://127.0.0.1:")
    assert "connection refused" in r.stderr and "Traceback" not in r.stderr


def test_forbidden_list_names_the_resource_and_what_to_do(srv, kc, cli) -> None:
    srv.forbid("list", "jobsets")
    r = cli("job", "list", "--kubeconfig", kc)
    assert r.exit_code == ExitCode.CLUSTER
    # the server's message once (it names the resource), and a hint for a read (issue #19)
    assert r.stderr.startswith("error: jobsets.jobset.x-k8s.io is forbidden: User ")
    assert r.stderr.count("forbidden") == 1
    assert "hint: ask a cluster admin for read access (RBAC), or look in another namespace (-n)" in r.stderr


def test_trainjobs_we_may_not_list_leave_the_jobsets_listed_with_a_warning(srv, kc, cli) -> None:
    seed(srv, "visible")
    srv.forbid("list", "trainjobs")
    r = cli("job", "list", "--kubeconfig", kc, "-o", "name")
    assert r.exit_code == 0, r.stderr
    assert r.stdout == "jobset.jobset.x-k8s.io/visible\n"
    assert r.stderr.startswith("warning: trainjobs.trainer.kubeflow.org is forbidden: ")
    assert "showing JobSets only" in r.stderr


def test_a_slow_server_times_out_with_the_request_timeout(srv, kc, cli) -> None:
    srv.slow(2.0, verb="list", resource="jobsets")
    r = cli("job", "list", "--kubeconfig", kc, "--request-timeout", "0.3")
    assert r.exit_code == ExitCode.CLUSTER
    assert "did not answer within 0.3s" in r.stderr


def test_list_without_trainer_crds_shows_jobsets_and_without_jobset_says_what_to_install(tmp_path, cli) -> None:
    with ApiServerDouble(crds={"jobset"}) as plain:
        seed(plain, "demo")
        r = cli("job", "list", "--kubeconfig", str(plain.write_kubeconfig(tmp_path / "a")), "-o", "name")
    with ApiServerDouble(crds={"trainer"}) as bare:
        missing = cli("job", "list", "--kubeconfig", str(bare.write_kubeconfig(tmp_path / "b")))
    assert (r.exit_code, r.stdout) == (0, "jobset.jobset.x-k8s.io/demo\n")
    assert missing.exit_code == ExitCode.CLUSTER
    assert "does not serve JobSets" in missing.stderr and "install JobSet" in missing.stderr
