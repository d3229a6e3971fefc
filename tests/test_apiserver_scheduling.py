"""What the API-server double serves for `job why` (issue #29): nodes, ResourceQuotas, Kueue's
kinds, and RBAC refusals with the real server's Status body, byte for byte in its fields.

The 403 shape is k8s.io/apimachinery/pkg/api/errors NewForbidden (message `<resource> is forbidden:
<why>`, details.kind = the resource, details.group only when there is one), with the RBAC
authorizer's reason (plugin/pkg/auth/authorizer/rbac/rbac.go: `User "<u>" cannot <verb> resource
"<resource>" in API group "<group>" in the namespace "<ns>"`, or `at the cluster scope`)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
import urllib3
from apiserver import ApiServerDouble
from apiserver import scheduling as sch


@pytest.fixture
def srv() -> Iterator[ApiServerDouble]:
    with ApiServerDouble(user="x") as double:
        double.add_namespace("ns")
        yield double


def get(srv: ApiServerDouble, path: str) -> urllib3.BaseHTTPResponse:
    return urllib3.PoolManager(retries=False).request("GET", srv.url + path)


def test_a_forbidden_list_answers_the_real_servers_status_body(srv: ApiServerDouble) -> None:
    srv.forbid("list", "pods")
    r = get(srv, "/api/v1/namespaces/ns/pods")
    assert r.status == 403
    assert json.loads(r.data) == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'pods is forbidden: User "x" cannot list resource "pods" in API group "" in the namespace "ns"',
        "reason": "Forbidden",
        "details": {"kind": "pods"},
        "code": 403,
    }


def test_a_forbidden_cluster_scoped_list_says_at_the_cluster_scope(srv: ApiServerDouble) -> None:
    srv.forbid("list", "nodes")
    body = json.loads(get(srv, "/api/v1/nodes").data)
    assert (
        body["message"]
        == 'nodes is forbidden: User "x" cannot list resource "nodes" in API group "" at the cluster scope'
    )
    assert body["details"] == {"kind": "nodes"}


def test_forbidding_all_namespaces_leaves_a_namespace_readable(srv: ApiServerDouble) -> None:
    srv.add_pod("p", "ns")
    srv.forbid("list", "pods", all_namespaces=True)  # what a namespaced RoleBinding grants
    assert get(srv, "/api/v1/namespaces/ns/pods").status == 200
    across = get(srv, "/api/v1/pods")
    assert across.status == 403
    assert json.loads(across.data)["message"].endswith(
        'cannot list resource "pods" in API group "" at the cluster scope'
    )


def test_nodes_quotas_and_kueue_are_served_and_listed(srv: ApiServerDouble) -> None:
    sch.add_node(srv, "gpu-0", allocatable={"nvidia.com/gpu": "8"}, labels={"gpu-type": "h100"}, unschedulable=True)
    sch.add_node(srv, "gpu-1", allocatable={"nvidia.com/gpu": "8"})
    sch.add_quota(srv, "q", "ns", hard={"requests.nvidia.com/gpu": "8"}, used={"requests.nvidia.com/gpu": "0"})
    sch.add_local_queue(srv, "team", "ns", "cq")

    core = {r["name"] for r in json.loads(get(srv, "/api/v1").data)["resources"]}
    kueue = {r["name"] for r in json.loads(get(srv, "/apis/kueue.x-k8s.io/v1beta1").data)["resources"]}
    nodes = json.loads(get(srv, "/api/v1/nodes?fieldSelector=spec.unschedulable%3Dtrue").data)["items"]
    quota = json.loads(get(srv, "/api/v1/namespaces/ns/resourcequotas/q").data)
    queue = json.loads(get(srv, "/apis/kueue.x-k8s.io/v1beta1/namespaces/ns/localqueues/team").data)

    assert {"nodes", "resourcequotas"} <= core
    assert {"workloads", "localqueues", "clusterqueues"} <= kueue
    assert [n["metadata"]["name"] for n in nodes] == ["gpu-0"]
    assert quota["status"] == {"hard": {"requests.nvidia.com/gpu": "8"}, "used": {"requests.nvidia.com/gpu": "0"}}
    assert queue["spec"] == {"clusterQueue": "cq"}


def test_a_cluster_without_kueue_answers_404_for_workloads(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with ApiServerDouble(crds={"jobset"}) as srv:
        r = get(srv, "/apis/kueue.x-k8s.io/v1beta1/namespaces/default/workloads")
    assert r.status == 404
    assert json.loads(r.data)["message"] == "the server could not find the requested resource"


def test_refused_scheduling_leaves_the_condition_and_the_event(srv: ApiServerDouble) -> None:
    srv.add_pod("p", "ns", phase="Pending")
    sch.refuse_scheduling(srv, "p", "ns", sch.RECORDED["gpu16"])
    pod = srv.get_object("pods", "p", "ns")
    (event,) = srv.objects("events", "ns")
    assert pod is not None
    assert pod["status"]["conditions"][0] | {"lastTransitionTime": None} == {
        "type": "PodScheduled",
        "status": "False",
        "reason": "Unschedulable",
        "message": sch.RECORDED["gpu16"],
        "lastTransitionTime": None,
        "observedGeneration": 1,
    }
    assert "containerStatuses" not in pod["status"]
    assert (event["type"], event["reason"], event["message"], event["reportingComponent"]) == (
        "Warning",
        "FailedScheduling",
        sch.RECORDED["gpu16"],
        "default-scheduler",
    )


@pytest.mark.shared
def test_the_recorded_texts_are_the_reference_recordings() -> None:
    """Checked against ../shared when it is there: the double quotes the real scheduler verbatim."""
    from conftest import SHARED

    recording = SHARED / "reference" / "cluster" / "pending-pods.md"
    if not recording.is_file():
        pytest.skip("../shared/reference/cluster/pending-pods.md is not present")
    import yaml

    text = recording.read_text()
    messages = [
        doc["message"] if isinstance(doc, dict) and "message" in doc else doc[0]["message"]
        for doc in (yaml.safe_load(block.split("```", 1)[0]) for block in text.split("```yaml\n")[1:])
    ]
    assert set(sch.RECORDED.values()) == set(messages)


def test_claims_are_served_listed_and_refused_as_the_real_server_does(srv: ApiServerDouble) -> None:
    # core/v1 persistentvolumeclaims: namespaced, short name pvc, a status subresource
    sch.add_claim(srv, "data", "ns", storage_class="fast")
    sch.add_claim(srv, "ckpt", "ns", phase="Bound", volume="pvc-1", access_modes=("ReadWriteMany",))

    core = {r["name"]: r for r in json.loads(get(srv, "/api/v1").data)["resources"]}
    listed = json.loads(get(srv, "/api/v1/namespaces/ns/persistentvolumeclaims").data)
    one = json.loads(get(srv, "/api/v1/namespaces/ns/persistentvolumeclaims/ckpt").data)
    missing = json.loads(get(srv, "/api/v1/namespaces/ns/persistentvolumeclaims/nope").data)
    srv.forbid("list", "persistentvolumeclaims")
    refused = json.loads(get(srv, "/api/v1/namespaces/ns/persistentvolumeclaims").data)

    assert core["persistentvolumeclaims"]["namespaced"] is True
    assert core["persistentvolumeclaims"]["shortNames"] == ["pvc"]
    assert "persistentvolumeclaims/status" in core
    assert listed["kind"] == "PersistentVolumeClaimList"
    assert {(i["metadata"]["name"], i["status"]["phase"]) for i in listed["items"]} == {
        ("data", "Pending"),
        ("ckpt", "Bound"),
    }
    assert one["status"] == {"phase": "Bound", "accessModes": ["ReadWriteMany"], "capacity": {"storage": "100Gi"}}
    assert missing["message"] == 'persistentvolumeclaims "nope" not found'
    assert refused["message"] == (
        'persistentvolumeclaims is forbidden: User "x" cannot list resource "persistentvolumeclaims" '
        'in API group "" in the namespace "ns"'
    )
