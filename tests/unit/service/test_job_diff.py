"""`ktrain.service.job_diff`: a job's live objects paired with a render of it, each rendered object
normalised by a server-side dry run (so only real changes show), Secret values masked."""

from __future__ import annotations

from typing import Any

from ktrain.cluster import client as k
from ktrain.jobs.plan import record_runtime
from ktrain.service.job_create import create_job
from ktrain.service.job_diff import compare, keep_live_ssh_keys

from .conftest import rendered

DS = "deepspeed-distributed"


def desired(cluster: Any, runtime: str = DS, **overrides: Any) -> list[Any]:
    """What `ktrain job diff` compares: the render as `job create` submits it, the live SSH keys kept."""
    objects = record_runtime(rendered(runtime=runtime, **overrides), runtime)
    keep_live_ssh_keys(cluster, objects, "team-a")
    return objects


def diff(kube: Any, cluster: Any, objects: list[Any]) -> Any:
    jobset = k.get(cluster, k.JOBSET, "demo", "team-a")
    kube.srv.clear_requests()
    return compare(cluster, "demo", "team-a", objects, trainjob=None, jobset=jobset)


def made(cluster: Any) -> None:
    create_job(cluster, record_runtime(rendered(runtime=DS), DS), name="demo", namespace="team-a", target="jobset")


def test_the_same_render_is_no_change_and_nothing_is_written(kube: Any, cluster: Any) -> None:
    made(cluster)
    comparison = diff(kube, cluster, desired(cluster))
    assert [(p.resource.kind, p.name) for p in comparison.pairs] == [
        ("Secret", "demo-mpi-ssh-auth"),
        ("ConfigMap", "demo-mpi-hostfile"),
        ("JobSet", "demo"),
    ]
    assert comparison.changed == [] and comparison.warnings == []
    writes = [r for r in kube.srv.requests if r.verb not in ("get", "list")]
    assert writes and all(r.query.get("dryRun") == ["All"] for r in writes)  # normalised by dry runs only


def test_a_new_ssh_key_pair_is_not_a_change_once_the_live_keys_are_kept(kube: Any, cluster: Any) -> None:
    made(cluster)
    fresh = record_runtime(rendered(runtime=DS), DS)  # every render makes a new key pair
    assert [p.name for p in diff(kube, cluster, fresh).changed] == ["demo-mpi-ssh-auth"]
    assert diff(kube, cluster, desired(cluster)).changed == []


def test_more_nodes_change_the_jobset_and_the_hostfile_with_kubectl_diffs_file_names(kube: Any, cluster: Any) -> None:
    made(cluster)
    changed = diff(kube, cluster, desired(cluster, nodes=3)).changed
    assert [p.file_name for p in changed] == [
        "v1.ConfigMap.team-a.demo-mpi-hostfile",
        "jobset.x-k8s.io.v1alpha2.JobSet.team-a.demo",
    ]
    jobset = changed[1]
    assert jobset.live is not None and jobset.merged is not None and jobset.live != jobset.merged


def test_objects_the_render_no_longer_makes_pair_with_nothing_and_secrets_stay_masked(kube: Any, cluster: Any) -> None:
    made(cluster)
    pairs = {(p.resource.kind, p.name): p for p in diff(kube, cluster, desired(cluster, "torch-distributed")).changed}
    assert set(pairs) == {("JobSet", "demo"), ("Secret", "demo-mpi-ssh-auth"), ("ConfigMap", "demo-mpi-hostfile")}
    secret = pairs[("Secret", "demo-mpi-ssh-auth")]
    assert secret.merged is None and pairs[("ConfigMap", "demo-mpi-hostfile")].merged is None
    assert secret.live is not None and set(secret.live["data"].values()) == {"***"}
    live = kube.srv.get_object("secrets", "demo-mpi-ssh-auth", namespace="team-a")
    assert not set(live["data"].values()) & {str(v) for v in secret.live["data"].values()}


def test_a_job_not_on_the_cluster_pairs_every_rendered_object_with_nothing(kube: Any, cluster: Any) -> None:
    comparison = diff(kube, cluster, desired(cluster))
    assert [(p.resource.kind, p.live) for p in comparison.changed] == [
        ("Secret", None),
        ("ConfigMap", None),
        ("JobSet", None),
    ]
