"""`ktrain.service.job_create.create_job`: a rendered job submitted to the double: what it writes and
in which order, the checks before any write, and the rollback when a write fails."""

from __future__ import annotations

import re
from typing import Any

import pytest
from apiserver import ApiServerDouble

from ktrain.cluster.connection import ConnectionOptions
from ktrain.cluster.kube import connect
from ktrain.errors import ApiError, ConflictError
from ktrain.service.job_create import MissingApiError, create_job

from .conftest import rendered


def refs(written: list[Any]) -> list[tuple[str, str]]:
    return [(w.resource.kind, w.name) for w in written]


def writes(srv: Any) -> list[tuple[str, str, bool]]:
    """The writes the server saw: (verb, resource, a dry run)."""
    return [
        (r.verb, r.resource.split(".")[0], r.query.get("dryRun") == ["All"])
        for r in srv.requests
        if r.verb in ("apply", "create", "patch", "update", "delete")
    ]


def create(cluster: Any, objects: list[Any], **kwargs: Any) -> Any:
    return create_job(cluster, objects, name="demo", namespace="team-a", target="jobset", **kwargs)


def test_the_jobset_goes_first_suspended_owns_the_rest_and_is_resumed_last(kube: Any, cluster: Any) -> None:
    result = create(cluster, rendered(runtime="deepspeed-distributed"))
    assert refs(result.written) == [
        ("Secret", "demo-mpi-ssh-auth"),
        ("ConfigMap", "demo-mpi-hostfile"),
        ("JobSet", "demo"),
    ]
    assert all(w.created for w in result.written) and result.warnings == []
    # a server dry run of every object first, then the writes, then the JobSet unsuspended
    assert writes(kube.srv) == [
        ("apply", "jobsets", True),
        ("apply", "secrets", True),
        ("apply", "configmaps", True),
        ("apply", "jobsets", False),
        ("apply", "secrets", False),
        ("apply", "configmaps", False),
        ("patch", "jobsets", False),
    ]
    jobset = kube.srv.get_object("jobsets", "demo", namespace="team-a")
    assert jobset is not None and jobset["spec"].get("suspend") is not True
    secret = kube.srv.get_object("secrets", "demo-mpi-ssh-auth", namespace="team-a")
    assert [(o["kind"], o["name"], o["uid"]) for o in secret["metadata"]["ownerReferences"]] == [
        ("JobSet", "demo", jobset["metadata"]["uid"])
    ]


def test_a_job_that_asks_to_stay_suspended_is_not_resumed(kube: Any, cluster: Any) -> None:
    create(cluster, rendered(suspend=True))
    assert kube.srv.get_object("jobsets", "demo", namespace="team-a")["spec"]["suspend"] is True
    assert [w for w in writes(kube.srv) if w[0] == "patch"] == []


def test_a_server_dry_run_stores_nothing(kube: Any, cluster: Any) -> None:
    result = create(cluster, rendered(runtime="deepspeed-distributed"), dry_run=True)
    assert refs(result.written) == [
        ("Secret", "demo-mpi-ssh-auth"),
        ("ConfigMap", "demo-mpi-hostfile"),
        ("JobSet", "demo"),
    ]
    assert all(dry for _, _, dry in writes(kube.srv))
    assert kube.srv.get_object("jobsets", "demo", namespace="team-a") is None


def test_an_existing_job_is_a_conflict_that_names_the_fix_and_writes_nothing(kube: Any, cluster: Any) -> None:
    create(cluster, rendered())
    kube.srv.clear_requests()
    with pytest.raises(
        ConflictError, match=re.escape("job jobset.jobset.x-k8s.io/demo already exists in namespace team-a")
    ) as err:
        create(cluster, rendered())
    assert err.value.status == 409
    assert "--overwrite" in (err.value.hint or "") and "ktrain job delete demo -n team-a" in (err.value.hint or "")
    assert writes(kube.srv) == []


def test_overwrite_deletes_the_existing_job_first_and_says_so(kube: Any, cluster: Any) -> None:
    create(cluster, rendered())
    old = kube.srv.get_object("jobsets", "demo", namespace="team-a")["metadata"]["uid"]
    result = create(cluster, rendered(), overwrite=True)
    assert result.warnings == ["--overwrite: deleted the existing job demo first (jobset.jobset.x-k8s.io/demo)"]
    assert kube.srv.get_object("jobsets", "demo", namespace="team-a")["metadata"]["uid"] != old


def test_a_failed_write_rolls_back_what_was_created(kube: Any, cluster: Any) -> None:
    kube.srv.inject(verb="apply", resource="configmaps", code=500, message="etcd is down", dry_run=False)
    with pytest.raises(ApiError, match="etcd is down") as err:
        create(cluster, rendered(runtime="deepspeed-distributed"))
    assert "nothing was left" in (err.value.hint or ""), err.value.hint
    for resource, name in (("jobsets", "demo"), ("secrets", "demo-mpi-ssh-auth"), ("configmaps", "demo-mpi-hostfile")):
        assert kube.srv.get_object(resource, name, namespace="team-a") is None, name


@pytest.mark.double
def test_a_kind_the_cluster_does_not_serve_is_named_before_any_write(tmp_path: Any) -> None:
    with ApiServerDouble(crds=set()) as srv:
        srv.add_namespace("team-a")
        cluster = connect(ConnectionOptions(kubeconfig=str(srv.write_kubeconfig(tmp_path / "kc", namespace="team-a"))))
        with pytest.raises(MissingApiError, match=r"does not serve JobSet \(jobset.x-k8s.io/v1alpha2\)") as err:
            create(cluster, rendered())
        assert writes(srv) == []
    assert "jobset" in (err.value.hint or "").lower()


def test_only_a_write_that_may_have_reached_the_server_counts_as_possibly_stored() -> None:
    from ktrain.cluster.kube import NotSentError
    from ktrain.errors import ApiError, ClusterUnreachableError
    from ktrain.service.job_create import possibly_applied

    assert possibly_applied(ClusterUnreachableError("connection reset"))  # sent, answer lost
    assert possibly_applied(ApiError("timeout", status=504)) and possibly_applied(ApiError("boom", status=500))
    assert possibly_applied(KeyboardInterrupt())
    assert not possibly_applied(NotSentError("connection refused"))  # never sent
    assert not any(possibly_applied(ApiError("no", status=code)) for code in (400, 403, 404, 409, 422))
