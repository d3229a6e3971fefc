"""`ktrain.service.job_list.list_jobs`: every job of the namespace with its pods, from three lists."""

from __future__ import annotations

from typing import Any

import pytest
from cli.jobs_double import COMPLETED, owned_by_trainjob, pod, seed

from ktrain.errors import ClusterError
from ktrain.service.job_list import list_jobs


def test_each_job_comes_with_its_own_pods_and_state(kube: Any, cluster: Any) -> None:
    a = seed(kube.srv, "alpha", namespace="team-a", nodes=2)
    b = seed(kube.srv, "beta", namespace="team-a", nodes=1)
    kube.srv.set_status("jobsets", "beta", {"conditions": [COMPLETED]}, namespace="team-a")
    pod(kube.srv, a, rank=0)
    pod(kube.srv, a, rank=1)
    pod(kube.srv, b, rank=0, phase="Succeeded")
    kube.srv.clear_requests()
    jobs = list_jobs(cluster)
    assert [(j.summary.name, j.summary.state, len(j.pods)) for j in jobs] == [
        ("alpha", "Running", 2),
        ("beta", "Complete", 1),
    ]
    assert {p["metadata"]["name"] for p in jobs[0].pods} == {"alpha-node-0-0-x1", "alpha-node-0-1-x1"}
    # one list of JobSets, one of TrainJobs, one of the namespace's job pods: no read per job
    assert sorted((r.verb, r.resource) for r in kube.srv.requests) == [
        ("list", "jobsets.jobset.x-k8s.io"),
        ("list", "pods"),
        ("list", "trainjobs.trainer.kubeflow.org"),
    ]
    assert all(r.namespace == "team-a" for r in kube.srv.requests)


def test_a_trainjob_and_its_jobset_are_one_job(kube: Any, cluster: Any) -> None:
    owned_by_trainjob(kube.srv, "demo", "torch-distributed", 1, [])
    jobs = list_jobs(cluster, all_namespaces=True)
    assert [(j.summary.name, j.obj["kind"]) for j in jobs] == [("demo", "TrainJob")]
    assert all(r.namespace is None for r in kube.srv.requests_for("list"))


def test_the_selector_goes_to_the_server(kube: Any, cluster: Any) -> None:
    seed(kube.srv, "alpha", namespace="team-a", labels={"team": "nlp"})
    seed(kube.srv, "beta", namespace="team-a", labels={"team": "cv"})
    assert [j.summary.name for j in list_jobs(cluster, selector="team=nlp")] == ["alpha"]
    assert all(r.query.get("labelSelector") == ["team=nlp"] for r in kube.srv.requests_for("list", "jobsets"))


def test_no_jobs_reads_no_pods(kube: Any, cluster: Any) -> None:
    assert list_jobs(cluster) == []
    assert kube.srv.requests_for("list", "pods") == []


def test_trainjobs_it_may_not_list_leave_the_jobsets_with_a_warning(kube: Any, cluster: Any) -> None:
    seed(kube.srv, "alpha", namespace="team-a")
    kube.srv.forbid("list", "trainjobs")
    warnings: list[str] = []
    assert [j.summary.name for j in list_jobs(cluster, warnings=warnings)] == ["alpha"]
    assert len(warnings) == 1 and warnings[0].endswith("; showing JobSets only")
    assert "forbidden" in warnings[0]


@pytest.mark.double
def test_a_cluster_without_jobsets_says_how_to_install_them(tmp_path: Any) -> None:
    from apiserver import ApiServerDouble

    from ktrain.cluster.connection import ConnectionOptions
    from ktrain.cluster.kube import connect

    with ApiServerDouble(crds=set()) as srv:
        cluster = connect(ConnectionOptions(kubeconfig=str(srv.write_kubeconfig(tmp_path / "kubeconfig"))))
        with pytest.raises(ClusterError, match=r"does not serve JobSets") as err:
            list_jobs(cluster)
    assert "jobset.sigs.k8s.io" in (err.value.hint or "")
