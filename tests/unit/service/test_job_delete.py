"""`ktrain.service.job_delete`: deleting a job and the companions it owns, and nothing of anyone else's."""

from __future__ import annotations

from typing import Any

from cli.jobs_double import seed

from ktrain.service.job_create import create_job
from ktrain.service.job_delete import delete_job, plain_jobsets, select_jobs

from .conftest import rendered


def refs(written: list[Any]) -> list[tuple[str, str]]:
    return [(w.resource.kind, w.name) for w in written]


def made(kube: Any, cluster: Any, name: str = "demo") -> None:
    """A DeepSpeed job as `job create` makes it: its MPI Secret and ConfigMap owned by its JobSet."""
    create_job(cluster, rendered(name, "deepspeed-distributed"), name=name, namespace="team-a", target="jobset")
    kube.srv.clear_requests()


def test_deleting_a_job_deletes_its_jobset_and_the_collector_takes_its_companions(kube: Any, cluster: Any) -> None:
    made(kube, cluster)
    assert refs(delete_job(cluster, "demo", "team-a")) == [("JobSet", "demo")]
    assert [(r.verb, r.resource, r.name) for r in kube.srv.requests_for("delete")] == [
        ("delete", "jobsets.jobset.x-k8s.io", "demo")
    ]
    for resource, name in (("jobsets", "demo"), ("secrets", "demo-mpi-ssh-auth"), ("configmaps", "demo-mpi-hostfile")):
        assert kube.srv.get_object(resource, name, namespace="team-a") is None, name


def test_orphan_deletes_the_jobset_alone_and_its_companions_are_no_longer_the_jobs(kube: Any, cluster: Any) -> None:
    made(kube, cluster)
    assert refs(delete_job(cluster, "demo", "team-a", propagation="Orphan")) == [("JobSet", "demo")]
    secret = kube.srv.get_object("secrets", "demo-mpi-ssh-auth", namespace="team-a")
    assert secret is not None and not secret["metadata"].get("ownerReferences")  # orphaned, as the collector does
    assert delete_job(cluster, "demo", "team-a") == []  # no longer the job's: left alone
    assert kube.srv.get_object("configmaps", "demo-mpi-hostfile", namespace="team-a") is not None


def test_an_object_of_the_same_name_that_the_job_does_not_own_is_left(kube: Any, cluster: Any) -> None:
    seed(kube.srv, "demo", runtime="deepspeed-distributed", namespace="team-a")  # stored without owners
    assert refs(delete_job(cluster, "demo", "team-a")) == [("JobSet", "demo")]
    assert kube.srv.get_object("configmaps", "demo-mpi-hostfile", namespace="team-a") is not None
    assert [r.resource for r in kube.srv.requests_for("delete")] == ["jobsets.jobset.x-k8s.io"]


def test_a_server_dry_run_deletes_nothing(kube: Any, cluster: Any) -> None:
    made(kube, cluster)
    # the JobSet stays, so its companions are still there and named: what a real run deletes
    assert refs(delete_job(cluster, "demo", "team-a", dry_run=True)) == [
        ("JobSet", "demo"),
        ("Secret", "demo-mpi-ssh-auth"),
        ("ConfigMap", "demo-mpi-hostfile"),
    ]
    for resource, name in (("jobsets", "demo"), ("secrets", "demo-mpi-ssh-auth"), ("configmaps", "demo-mpi-hostfile")):
        assert kube.srv.get_object(resource, name, namespace="team-a") is not None, name
    assert len(kube.srv.requests_for("delete")) == 3


def test_a_job_that_is_not_there_deletes_nothing(kube: Any, cluster: Any) -> None:
    assert delete_job(cluster, "ghost", "team-a") == []
    assert kube.srv.requests_for("delete") == []


def test_select_jobs_names_the_jobs_the_selector_matches(kube: Any, cluster: Any) -> None:
    seed(kube.srv, "alpha", namespace="team-a", labels={"team": "nlp"})
    seed(kube.srv, "beta", namespace="team-a", labels={"team": "nlp"})
    seed(kube.srv, "gamma", namespace="team-a", labels={"team": "cv"})
    assert select_jobs(cluster, "team-a", "team=nlp") == ["alpha", "beta"]
    assert select_jobs(cluster, "team-a", None) == ["alpha", "beta", "gamma"]


def test_plain_jobsets_are_someone_elses_and_what_was_read_is_kept(kube: Any, cluster: Any) -> None:
    seed(kube.srv, "ours", namespace="team-a")
    kube.srv.put_object(
        {
            "apiVersion": "jobset.x-k8s.io/v1alpha2",
            "kind": "JobSet",
            "metadata": {"name": "theirs", "namespace": "team-a"},
            "spec": {
                "replicatedJobs": [
                    {
                        "name": "w",
                        "template": {
                            "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "busybox"}]}}}
                        },
                    }
                ]
            },
        }
    )
    seen: dict[Any, Any] = {}
    assert plain_jobsets(cluster, ["ours", "theirs"], "team-a", seen) == ["theirs"]
    kube.srv.clear_requests()
    delete_job(cluster, "theirs", "team-a", propagation="Orphan", seen=seen)
    assert [r.verb for r in kube.srv.requests] == ["delete"]  # the TrainJob and JobSet were read already
