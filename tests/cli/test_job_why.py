"""`ktrain job why` (and the same verdict in `job get` and `job wait`), one test per verdict,
against the API-server double holding pods, events, nodes, Workloads, PodGroups and quotas in
the state their writers leave them (issue #29).

The scheduler's texts for too many GPUs, too much memory and an unmatched node selector are the
ones a real kube-scheduler 1.36 wrote (`apiserver.scheduling.RECORDED`); every other text names
the file of the component that writes it.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from apiserver import ApiServerDouble
from apiserver import scheduling as sch

from ktrain import constants as c
from ktrain.cli.common import registry_from
from ktrain.cluster import reads
from ktrain.errors import ExitCode
from ktrain.service.render import render_request
from ktrain.service.requests import JobOverrides, RenderRequest

pytestmark = pytest.mark.both_transports

JSON = dict[str, Any]
NS = "default"


def ago(minutes: float) -> dt.datetime:
    """A moment `minutes` before now (now: when the test runs, not when the module was collected)."""
    return dt.datetime.now(dt.timezone.utc) - dt.timedelta(minutes=minutes)


GPU_NODE = {"cpu": "32", "memory": "256Gi", "nvidia.com/gpu": "8", "pods": "110"}


@pytest.fixture
def srv() -> Iterator[ApiServerDouble]:
    with ApiServerDouble() as double:
        yield double


@pytest.fixture
def kc(srv: ApiServerDouble, tmp_path: Path) -> str:
    return str(srv.write_kubeconfig(tmp_path / "kubeconfig"))


@pytest.fixture(autouse=True)
def fast_polling(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reads, "POLL_INTERVAL", 0.05)


def stamp(moment: dt.datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def seed(srv: ApiServerDouble, name: str = "demo", *, created: dt.datetime | None = None, **overrides: Any) -> JSON:
    """Render a bundled runtime and store its objects as `job create --target jobset` leaves them."""
    options = {"runtime": "torch-distributed", "name": name, "nodes": 2, "namespace": NS, **overrides}
    outcome = render_request(RenderRequest(overrides=JobOverrides(**options)), registry_from(None, None))
    jobset: JSON = {}
    for obj in outcome.result.objects:
        if created is not None:
            obj["metadata"]["creationTimestamp"] = stamp(created)
        stored = srv.put_object(obj)
        if obj["kind"] == "JobSet":
            jobset = stored
    return jobset


def template(jobset: JSON, rjob: str = "node") -> JSON:
    for rj in jobset["spec"]["replicatedJobs"]:
        if rj["name"] == rjob:
            return rj["template"]["spec"]["template"]
    raise KeyError(rjob)


def pod(
    srv: ApiServerDouble,
    jobset: JSON,
    rank: int,
    phase: str = "Pending",
    *,
    rjob: str = "node",
    created: dt.datetime | None = None,
    node: str | None = None,
) -> str:
    """A pod of the JobSet as the Job controller makes it: its template's spec, labels, rank."""
    name = f"{jobset['metadata']['name']}-{rjob}-0-{rank}-x{rank}"
    tmpl = template(jobset, rjob)
    spec = tmpl["spec"]
    srv.add_pod(
        name,
        NS,
        labels={
            **(tmpl.get("metadata", {}).get("labels") or {}),
            c.JOBSET_NAME_LABEL: jobset["metadata"]["name"],
            c.JOBSET_RJOB_NAME_LABEL: rjob,
            c.JOBSET_JOB_INDEX_LABEL: "0",
        },
        annotations={
            **(tmpl.get("metadata", {}).get("annotations") or {}),
            c.JOB_COMPLETION_INDEX_ANNOTATION: str(rank),
        },
        phase=phase,
        containers=spec["containers"],
        owner=jobset,
        node=node,
    )

    def copy_spec(obj: JSON) -> None:
        for key in ("nodeSelector", "tolerations", "affinity", "schedulerName"):
            if key in spec:
                obj["spec"][key] = spec[key]
        obj["spec"].setdefault("schedulerName", "default-scheduler")
        if node is None:  # not bound to a node: no kubelet has reported on its containers
            obj["status"].pop("containerStatuses", None)
        if created is not None:
            obj["metadata"]["creationTimestamp"] = stamp(created)

    sch.change_pod(srv, name, NS, copy_spec)
    return name


def why(cli: Any, kc: str, *args: str, name: str = "demo") -> Any:
    return cli("job", "why", name, "--kubeconfig", kc, *args)


def first_line(result: Any) -> str:
    return result.stdout.splitlines()[0]


# --- unschedulable ---------------------------------------------------------------------------------


def test_too_many_gpus_per_pod_names_the_ask_and_the_largest_node(srv, kc, cli) -> None:
    js = seed(srv, gpus=16)
    sch.add_nodes(srv, 8, allocatable=GPU_NODE)
    for rank in (0, 1):
        sch.refuse_scheduling(srv, pod(srv, js, rank), NS, sch.RECORDED["gpu16"])
    srv.clear_requests()

    r = why(cli, kc)

    assert r.exit_code == 1, r.stderr
    assert first_line(r) == "TooLarge: each pod asks 16 nvidia.com/gpu; the largest node has 8 (8 nodes)"
    assert "  pod demo-node-0-0-x0 (node rank 0): " + sch.RECORDED["gpu16"] in r.stdout
    assert "  nodes: 8 nodes with 8 nvidia.com/gpu" in r.stdout
    assert "next: ask for at most 8 nvidia.com/gpu per pod (--gpus) and more nodes (--nodes)" in r.stdout
    # Keep API calls few: the job (TrainJob, JobSet), its pods, the nodes. Nothing else.
    assert [(q.verb, q.resource) for q in srv.requests] == [
        ("get", "trainjobs.trainer.kubeflow.org"),
        ("get", "jobsets.jobset.x-k8s.io"),
        ("list", "pods"),
        ("list", "nodes"),
    ]


def test_too_much_memory_for_any_node(srv, kc, cli) -> None:
    js = seed(srv, requests={"memory": "900Gi"})
    sch.add_nodes(srv, 8, allocatable=GPU_NODE)
    sch.refuse_scheduling(srv, pod(srv, js, 0), NS, sch.RECORDED["mem"])

    r = why(cli, kc)

    assert first_line(r) == "TooLarge: each pod asks 900Gi memory; the largest node has 256Gi (8 nodes)"
    assert "next: ask for at most 256Gi memory per pod (--memory)" in r.stdout


def test_memory_held_by_other_pods_names_the_largest_free_amount(srv, kc, cli) -> None:
    js = seed(srv, requests={"memory": "100Gi"})
    sch.add_nodes(srv, 3, allocatable=GPU_NODE)
    srv.add_namespace("team-b")

    def holding(memory: str) -> list[JSON]:
        return [{"name": "c", "image": "x", "resources": {"requests": {"memory": memory}}}]

    # another team's pods hold 200Gi, 180Gi and 230Gi of the 256Gi each node has
    for i, held in enumerate(("200Gi", "180Gi", "230Gi")):
        srv.add_pod(f"other-{i}", "team-b", containers=holding(held), node=f"gpu-{i}")
    srv.add_pod("done", "team-b", phase="Succeeded", node="gpu-1", containers=holding("250Gi"))
    message = (
        "0/3 nodes are available: 3 Insufficient memory. no new claims to deallocate, preemption: "
        "0/3 nodes are available: 3 Preemption is not helpful for scheduling."
    )
    sch.refuse_scheduling(srv, pod(srv, js, 0), NS, message)
    srv.clear_requests()

    r = why(cli, kc)

    # a Succeeded pod holds nothing; gpu-1 has 256Gi - 180Gi = 76Gi free
    assert first_line(r) == (
        "Insufficient: each pod asks 100Gi memory; the most free on any node is 76Gi (gpu-1); "
        "nodes have up to 256Gi, other pods hold the rest"
    )
    listing = [q for q in srv.requests if q.resource == "pods" and q.namespace is None]
    assert len(listing) == 1 and listing[0].param("fieldSelector") == (
        "spec.nodeName!=,status.phase!=Succeeded,status.phase!=Failed"
    )


def test_a_node_selector_no_node_matches_lists_what_the_nodes_have(srv, kc, cli) -> None:
    js = seed(srv, node_selector={"gpu-type": "a100"})
    sch.add_nodes(srv, 2, "h", allocatable=GPU_NODE, labels={"gpu-type": "h100"})
    sch.add_nodes(srv, 6, "t", allocatable=GPU_NODE, labels={"gpu-type": "t4"})
    sch.refuse_scheduling(srv, pod(srv, js, 0), NS, sch.RECORDED["selector-event"])

    r = why(cli, kc)

    assert (
        first_line(r)
        == "NoMatchingNode: no node matches nodeSelector gpu-type=a100 (nodes have gpu-type: h100 ×2, t4 ×6)"
    )
    assert "next: use a value the nodes have (--gpu-type, --node-selector)" in r.stdout


def test_taints_the_pod_does_not_tolerate_are_named(srv, kc, cli) -> None:
    # tainttoleration/taint_toleration.go (1.32+): "node(s) had untolerated taint(s)", no taint named
    js = seed(srv)
    gpu_taint = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
    control = {"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}
    sch.add_nodes(srv, 6, allocatable=GPU_NODE, taints=[gpu_taint])
    sch.add_node(srv, "cp", allocatable=GPU_NODE, taints=[control])
    sch.add_node(
        srv,
        "tolerated",
        allocatable=GPU_NODE,
        taints=[{"key": "soft", "effect": "PreferNoSchedule"}],
        unschedulable=True,
    )
    message = (
        "0/8 nodes are available: 1 node(s) were unschedulable, 7 node(s) had untolerated taint(s). "
        "preemption: 0/8 nodes are available: 8 Preemption is not helpful for scheduling."
    )
    sch.refuse_scheduling(srv, pod(srv, js, 0), NS, message)

    r = why(cli, kc)

    assert first_line(r) == (
        "UntoleratedTaints: pod demo-node-0-0-x0 does not tolerate the taints of the nodes it may use: "
        "nvidia.com/gpu=present:NoSchedule (6 nodes), node-role.kubernetes.io/control-plane:NoSchedule (1 node)"
    )
    assert "next: add a toleration (--toleration nvidia.com/gpu=present:NoSchedule)" in r.stdout


def test_a_scheduler_that_is_not_installed_writes_nothing_and_is_named(tmp_path, cli) -> None:
    with ApiServerDouble(crds={"jobset", "trainer"}) as srv:  # no Volcano
        kc = str(srv.write_kubeconfig(tmp_path / "kc"))
        js = seed(srv)
        name = pod(srv, js, 0, created=ago(20))
        sch.change_pod(srv, name, NS, lambda p: p["spec"].update(schedulerName="volcano"))
        r = why(cli, kc)
        served = [q.path for q in srv.requests_for(verb="get", resource="")]

    assert r.exit_code == 1
    assert first_line(r) == (
        "NoScheduler: the pods name scheduler volcano, and the cluster does not serve Volcano "
        "(scheduling.volcano.sh): nothing will schedule them, nor write an event"
    )
    assert "schedulerName volcano" in r.stdout
    assert served == ["/apis/scheduling.volcano.sh/v1beta1"]  # discovery: is Volcano served?


def test_a_custom_scheduler_that_never_looks_at_the_pod(srv, kc, cli) -> None:
    js = seed(srv)
    name = pod(srv, js, 0, created=ago(20))
    sch.change_pod(srv, name, NS, lambda p: p["spec"].update(schedulerName="my-scheduler"))

    r = why(cli, kc)

    assert first_line(r) == (
        "NoScheduler: scheduler my-scheduler has not looked at pod demo-node-0-0-x0 in 20m: is it running?"
    )


# --- volumes -----------------------------------------------------------------------------------------
# kube-scheduler's VolumeBinding plugin (pkg/scheduler/framework/plugins/volumebinding/volume_binding.go
# PreFilter, binder.go ConflictReasons) words the refusal; the PV controller (pkg/controller/volume/
# persistentvolume/pv_controller.go) words the claim's Warning events; the attach/detach controller
# (pkg/controller/volume/attachdetach/reconciler/reconciler.go) the Multi-Attach error. A PreFilter
# refusal is UnschedulableAndUnresolvable, so preemption is "not helpful" on every node.

NOT_HELPFUL = "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
UNBOUND = f"0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims. {NOT_HELPFUL}"


def mount(srv: ApiServerDouble, name: str, claim: str, volume: str = "data") -> None:
    """The pod mounts `claim` at /data, as a runtime with a dataset or checkpoint volume does."""

    def change(p: JSON) -> None:
        p["spec"]["volumes"] = [{"name": volume, "persistentVolumeClaim": {"claimName": claim}}]
        p["spec"]["containers"][0]["volumeMounts"] = [{"name": volume, "mountPath": "/data"}]

    sch.change_pod(srv, name, NS, change)


def refused_for_volumes(srv: ApiServerDouble, js: JSON, message: str, claim: str = "data") -> str:
    name = pod(srv, js, 0)
    mount(srv, name, claim)
    sch.refuse_scheduling(srv, name, NS, message)
    return name


def test_a_claim_that_does_not_exist_is_named_without_reading_the_nodes(srv, kc, cli) -> None:
    js = seed(srv)
    sch.add_nodes(srv, 3, allocatable=GPU_NODE)
    refused_for_volumes(srv, js, f'0/3 nodes are available: persistentvolumeclaim "data" not found. {NOT_HELPFUL}')
    srv.clear_requests()

    r = why(cli, kc)
    requests = [(q.verb, q.resource) for q in srv.requests]
    doc = json.loads(why(cli, kc, "-o", "json").stdout)

    assert r.exit_code == 1
    assert first_line(r) == (
        "ClaimNotFound: pod demo-node-0-0-x0 (node rank 0) mounts PersistentVolumeClaim data (volume data), "
        "which does not exist in namespace default"
    )
    assert "next: create PersistentVolumeClaim data in default (`kubectl get pvc -n default` lists" in r.stdout
    assert (doc["reason"], doc["unread"]) == ("ClaimNotFound", [])
    # one list of claims for the namespace; no nodes, no events
    assert requests == [
        ("get", "trainjobs.trainer.kubeflow.org"),
        ("get", "jobsets.jobset.x-k8s.io"),
        ("list", "pods"),
        ("list", "persistentvolumeclaims"),
    ]


def test_an_unbound_claim_whose_storage_class_does_not_exist(srv, kc, cli) -> None:
    js = seed(srv)
    claim = sch.add_claim(srv, "data", NS, storage_class="fast")
    # pv_controller.go provisionClaim: Warning ProvisioningFailed with the class lister's error
    missing = 'storageclass.storage.k8s.io "fast" not found'
    srv.add_event(claim, "ProvisioningFailed", missing, type="Warning", component="persistentvolume-controller")
    refused_for_volumes(srv, js, UNBOUND)

    r = why(cli, kc)

    assert first_line(r) == (
        "ClaimPending: PersistentVolumeClaim data (volume data of pod demo-node-0-0-x0 (node rank 0)) is not "
        "bound: its storage class fast does not exist"
    )
    assert "  PersistentVolumeClaim default/data: Pending, storage class fast, 100Gi, ReadWriteOnce" in r.stdout
    assert f"  event on PersistentVolumeClaim data: ProvisioningFailed: {missing}" in r.stdout
    assert "next: `kubectl get storageclass` lists the classes: create the claim with one of them" in r.stdout


def test_a_claim_without_a_storage_class_that_no_volume_matches(srv, kc, cli) -> None:
    # pv_controller.go syncUnboundClaim: Normal FailedBinding "no persistent volumes available for this
    # claim and no storage class is set" (a Normal event: the claim's spec says the same)
    js = seed(srv)
    sch.add_claim(srv, "data", NS, storage_class=None)
    refused_for_volumes(srv, js, UNBOUND)

    r = why(cli, kc)

    assert first_line(r) == (
        "ClaimPending: PersistentVolumeClaim data (volume data of pod demo-node-0-0-x0 (node rank 0)) is not "
        "bound: it names no storage class, and no PersistentVolume matches it"
    )
    assert "next: set a storage class on the claim (`kubectl get storageclass` lists them)" in r.stdout


def test_a_claim_waiting_for_its_external_provisioner(srv, kc, cli) -> None:
    # pv_controller.go provisionClaimOperationExternal sets the provisioner annotations, then the
    # Normal ExternalProvisioning event "waiting for a volume to be created, either by external
    # provisioner ... or manually created by system administrator"
    js = seed(srv)
    sch.add_claim(srv, "data", NS, storage_class="fsx", provisioner="fsx.csi.aws.com")
    refused_for_volumes(srv, js, UNBOUND)

    r = why(cli, kc)

    assert first_line(r).startswith(
        "ClaimPending: PersistentVolumeClaim data (volume data of pod demo-node-0-0-x0 (node rank 0)) is not "
        "bound: waiting "
    )
    assert first_line(r).endswith("for provisioner fsx.csi.aws.com to create its volume (storage class fsx)")
    assert "next: provisioner fsx.csi.aws.com has not made the volume: ask the cluster admin" in r.stdout


def test_wait_for_first_consumer_without_a_volume_to_bind(srv, kc, cli) -> None:
    # binder.go ErrReasonBindConflict on every node: a WaitForFirstConsumer class with no provisioner
    # (local volumes) and no PersistentVolume that fits
    js = seed(srv)
    sch.add_claim(srv, "data", NS, storage_class="local-nvme", storage="2Ti")
    message = (
        "0/4 nodes are available: 4 node(s) didn't find available persistent volumes to bind. "
        "preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling."
    )
    refused_for_volumes(srv, js, message)

    r = why(cli, kc)

    assert first_line(r) == (
        "ClaimPending: PersistentVolumeClaim data (volume data of pod demo-node-0-0-x0 (node rank 0)) is not "
        "bound: no PersistentVolume of storage class local-nvme fits it on the nodes the pod may use "
        "(the class binds when a pod is scheduled: WaitForFirstConsumer)"
    )
    assert "  PersistentVolumeClaim default/data: Pending, storage class local-nvme, 2Ti, ReadWriteOnce" in r.stdout


def test_claims_forbidden_says_so_and_decides_from_the_schedulers_words(srv, kc, cli) -> None:
    js = seed(srv)
    refused_for_volumes(srv, js, UNBOUND)
    srv.forbid("list", "persistentvolumeclaims")

    r = why(cli, kc)

    assert r.exit_code == 1
    assert first_line(r) == (
        "ClaimPending: the claims pod demo-node-0-0-x0 (node rank 0) mounts (data) are not bound "
        "(the PersistentVolumeClaims could not be read to say more)"
    )
    assert r.stdout.splitlines()[-1] == (
        'not read: PersistentVolumeClaims: forbidden: User "system:serviceaccount:default:ktrain" cannot list '
        'resource "persistentvolumeclaims" in API group "" in the namespace "default"'
    )


def test_a_read_write_once_claim_the_jobs_other_pod_holds_on_another_node(srv, kc, cli) -> None:
    js = seed(srv)
    sch.add_claim(srv, "ckpt", NS, phase="Bound", volume="pvc-7f3a", storage_class="gp3")
    first = pod(srv, js, 0, "Running", node="gpu-0", created=ago(6))
    second = pod(srv, js, 1, node="gpu-1", created=ago(6))
    for name in (first, second):
        mount(srv, name, "ckpt", volume="ckpt")
    sch.change_pod(srv, second, NS, sch.waiting("ContainerCreating"))
    attach = f'Multi-Attach error for volume "pvc-7f3a" Volume is already used by pod(s) {first}'
    srv.add_event(
        srv.get_object("pods", second),
        "FailedAttachVolume",
        attach,
        type="Warning",
        component="attachdetach-controller",
    )

    r = why(cli, kc)

    assert first_line(r) == (
        "VolumeInUse: pod demo-node-0-1-x1 (node rank 1) cannot start on node gpu-1: claim ckpt (ReadWriteOnce) "
        "is attached to the node of the job's own pod demo-node-0-0-x0; a ReadWriteOnce volume serves one node "
        "at a time"
    )
    assert f"  event on Pod {second}: FailedAttachVolume: {attach}" in r.stdout
    assert "next: mount a ReadWriteMany claim (a shared file system)" in r.stdout


# --- pod affinity, topology spread, host ports ----------------------------------------------------------
# kube-scheduler interpodaffinity/filtering.go, podtopologyspread/filtering.go, nodeports/node_ports.go


def test_jobset_exclusive_placement_with_every_domain_taken(srv, kc, cli) -> None:
    # JobSet pkg/webhooks/pod_mutating_webhook.go: the leader pod (index 0) of a JobSet annotated
    # alpha.jobset.sigs.k8s.io/exclusive-topology gets a required anti-affinity to every other Job's
    # pods (job-key Exists, NotIn [its own]) in that topology key
    js = seed(srv)
    pool = "cloud.google.com/gke-nodepool"
    sch.add_nodes(srv, 2, "a", allocatable=GPU_NODE, labels={pool: "pool-a"})
    sch.add_nodes(srv, 2, "b", allocatable=GPU_NODE, labels={pool: "pool-b"})
    srv.add_namespace("team-b")
    for i, where in enumerate(("a-0", "b-1")):
        other = {c.JOBSET_NAME_LABEL: f"other-{i}", c.JOBSET_JOB_KEY_LABEL: f"key-{i}"}
        srv.add_pod(f"other-{i}", "team-b", labels=other, node=where)
    name = pod(srv, js, 0)
    anti = [
        {
            "labelSelector": {
                "matchExpressions": [
                    {"key": c.JOBSET_JOB_KEY_LABEL, "operator": "Exists"},
                    {"key": c.JOBSET_JOB_KEY_LABEL, "operator": "NotIn", "values": ["mine"]},
                ]
            },
            "topologyKey": pool,
            "namespaceSelector": {},
        }
    ]

    def exclusive(p: JSON) -> None:
        p["metadata"]["annotations"][c.JOBSET_EXCLUSIVE_ANNOTATION] = pool
        p["metadata"]["labels"][c.JOBSET_JOB_KEY_LABEL] = "mine"
        p["spec"]["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": anti}}

    sch.change_pod(srv, name, NS, exclusive)
    message = (
        "0/4 nodes are available: 4 node(s) didn't match pod anti-affinity rules. preemption: 0/4 nodes are "
        "available: 4 No preemption victims found for incoming pod."
    )
    sch.refuse_scheduling(srv, name, NS, message)

    r = why(cli, kc)

    assert first_line(r) == (
        "ExclusivePlacement: JobSet exclusive placement (alpha.jobset.sigs.k8s.io/exclusive-topology: "
        f"{pool}) puts each Job in a {pool} domain of its own; all 2 {pool} domains are held by other Jobs"
    )
    assert f"  {pool}=pool-a: team-b/other-0 (2 nodes)" in r.stdout
    assert f"  {pool}=pool-b: team-b/other-1 (2 nodes)" in r.stdout
    assert "next: wait for the Jobs holding the domains to end (`ktrain job list -A`), or run without" in r.stdout


def test_a_topology_spread_constraint_names_its_key_and_skew(srv, kc, cli) -> None:
    js = seed(srv)
    sch.add_nodes(srv, 3, allocatable=GPU_NODE, labels={"topology.kubernetes.io/zone": "z1"})
    name = pod(srv, js, 0)
    spread = {
        "maxSkew": 1,
        "topologyKey": "topology.kubernetes.io/zone",
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {c.JOBSET_NAME_LABEL: "demo"}},
    }
    sch.change_pod(srv, name, NS, lambda p: p["spec"].update(topologySpreadConstraints=[spread]))
    sch.refuse_scheduling(
        srv, name, NS, "0/3 nodes are available: 3 node(s) didn't match pod topology spread constraints."
    )

    r = why(cli, kc)

    assert first_line(r) == (
        "TopologySpread: pod demo-node-0-0-x0's topology spread constraint cannot be met on 3 of 3 nodes "
        "(topologyKey topology.kubernetes.io/zone, maxSkew 1, pods matching jobset.sigs.k8s.io/jobset-name=demo)"
    )
    assert "  nodes have topology.kubernetes.io/zone: z1 ×3" in r.stdout


def test_a_host_port_other_pods_hold(srv, kc, cli) -> None:
    js = seed(srv)
    sch.add_nodes(srv, 2, allocatable=GPU_NODE)
    name = pod(srv, js, 0)
    sch.change_pod(
        srv, name, NS, lambda p: p["spec"]["containers"][0].update(ports=[{"containerPort": 29500, "hostPort": 29500}])
    )
    message = (
        "0/2 nodes are available: 2 node(s) didn't have free ports for the requested pod ports. preemption: "
        "0/2 nodes are available: 2 No preemption victims found for incoming pod."
    )
    sch.refuse_scheduling(srv, name, NS, message)

    r = why(cli, kc)

    assert first_line(r) == (
        "HostPortsTaken: pod demo-node-0-0-x0 asks host port 29500/TCP; other pods hold it on 2 of 2 nodes"
    )
    assert "next: use another port, or run without hostPort/hostNetwork" in r.stdout


# --- gangs -----------------------------------------------------------------------------------------


def test_a_coscheduling_gang_the_nodes_cannot_hold(srv, kc, cli) -> None:
    # scheduler-plugins apis/scheduling/v1alpha1 PodGroup (spec.minMember), pods labelled
    # scheduling.x-k8s.io/pod-group; the refusal is kube-scheduler's FitError (framework/types.go)
    js = seed(srv, nodes=4, gpus=8)
    group = "demo"
    srv.put_object(
        {
            "apiVersion": c.COSCHEDULING_API_VERSION,
            "kind": "PodGroup",
            "metadata": {"name": group, "namespace": NS},
            "spec": {"minMember": 4},
            "status": {"phase": "Pending"},
        }
    )
    sch.add_nodes(srv, 3, allocatable=GPU_NODE)
    message = (
        "0/3 nodes are available: 3 Insufficient nvidia.com/gpu. preemption: 0/3 nodes are available: "
        "3 No preemption victims found for incoming pod."
    )
    for rank in range(4):
        name = pod(srv, js, rank)
        sch.change_pod(srv, name, NS, lambda p: p["metadata"]["labels"].update({c.COSCHEDULING_POD_GROUP_LABEL: group}))
        sch.refuse_scheduling(srv, name, NS, message)

    r = why(cli, kc)

    assert first_line(r) == (
        "GangUnschedulable: the gang needs 4 pods placed at once (PodGroup demo minMember 4); the nodes have room for 3"
    )
    assert "next: run on fewer nodes (--nodes 3)" in r.stdout


def test_a_volcano_gang_reports_the_podgroup_condition(srv, kc, cli) -> None:
    # volcano pkg/scheduler/cache/cache.go RecordJobStatusEvent: "<pending>/<tasks> tasks in gang unschedulable: ..."
    js = seed(srv, nodes=4, gpus=8)
    gang = (
        "4/4 tasks in gang unschedulable: pod group is not ready, 4 Pending, 4 minAvailable; "
        "Pending: 1 Unschedulable, 3 Schedulable"
    )
    srv.put_object(
        {
            "apiVersion": c.VOLCANO_API_VERSION,
            "kind": "PodGroup",
            "metadata": {"name": "demo-pg", "namespace": NS},
            "spec": {"minMember": 4, "queue": "default"},
            "status": {
                "phase": "Inqueue",
                "conditions": [sch.condition("Unschedulable", "True", "NotEnoughResources", gang)],
            },
        }
    )
    sch.add_nodes(srv, 3, allocatable=GPU_NODE)
    for rank in range(4):
        name = pod(srv, js, rank)

        def volcano(p: JSON) -> None:
            p["spec"]["schedulerName"] = "volcano"
            p["metadata"]["annotations"][c.VOLCANO_GROUP_NAME_ANNOTATION] = "demo-pg"

        sch.change_pod(srv, name, NS, volcano)
        sch.refuse_scheduling(
            srv, name, NS, "0/3 nodes are unavailable: 3 Insufficient nvidia.com/gpu.", scheduler="volcano"
        )

    r = why(cli, kc)

    assert first_line(r).startswith("GangUnschedulable: the gang needs 4 pods placed at once (PodGroup demo-pg")
    assert f"  PodGroup condition Unschedulable: {gang}" in r.stdout


# --- pods that fail ----------------------------------------------------------------------------------


def test_an_image_that_cannot_be_pulled_quotes_the_registry(srv, kc, cli) -> None:
    # kubelet pkg/kubelet/images/image_manager.go: waiting ImagePullBackOff `Back-off pulling image "<i>"`
    # and the Warning event `Failed to pull image "<i>": <the runtime's error>` (reasons: images/types.go)
    js = seed(srv, image="registry.example/team/trainer:nope")
    name = pod(srv, js, 0, node="gpu-0")
    image = "registry.example/team/trainer:nope"
    sch.change_pod(srv, name, NS, sch.waiting("ImagePullBackOff", f'Back-off pulling image "{image}"'))
    registry = (
        f'rpc error: code = NotFound desc = failed to pull and unpack image "{image}": '
        f'failed to resolve reference "{image}": {image}: not found'
    )
    stored = srv.get_object("pods", name)
    srv.add_event(stored, "Failed", f'Failed to pull image "{image}": {registry}', type="Warning", component="kubelet")

    r = why(cli, kc)

    assert first_line(r) == f"ImagePull: image {image} cannot be pulled: {registry}"
    assert "next: check the image name and tag (--image)" in r.stdout


def test_a_crash_loop_shows_the_last_lines_of_the_failing_container(srv, kc, cli) -> None:
    # kubelet pkg/kubelet/kuberuntime/kuberuntime_manager.go (doBackOff: "back-off <d> restarting failed
    # container=<c> pod=<p>"), reason CrashLoopBackOff from pkg/kubelet/container/sync_result.go
    js = seed(srv)
    name = pod(srv, js, 0, "Running", node="gpu-0")
    pod(srv, js, 1, "Running", node="gpu-1")
    last = {"exitCode": 1, "reason": "Error", "startedAt": "2026-01-01T00:00:00Z", "finishedAt": "2026-01-01T00:01:00Z"}
    crash = f"back-off 40s restarting failed container=node pod={name}_default(uid)"
    sch.change_pod(srv, name, NS, sch.waiting("CrashLoopBackOff", crash, restarts=3, last=last))
    srv.append_log(name, "loading data\nTraceback (most recent call last):\nValueError: bad shape\n", previous=True)
    srv.clear_requests()

    r = why(cli, kc)

    assert r.exit_code == 1
    assert first_line(r) == (
        "CrashLoopBackOff: container node of pod demo-node-0-0-x0 (node rank 0) keeps crashing "
        "(3 restarts, last exit code 1)"
    )
    assert r.stdout.splitlines()[1:6] == [
        f"  pod demo-node-0-0-x0 (node rank 0): {crash}",
        "  last lines of container node before it ended:",
        "    loading data",
        "    Traceback (most recent call last):",
        "    ValueError: bad shape",
    ]
    (log,) = srv.requests_for(resource="pods/log")
    assert (log.param("previous"), log.param("tailLines"), log.param("container")) == ("true", "10", "node")


def test_an_oom_kill_names_the_limit(srv, kc, cli) -> None:
    # the CRI runtime (containerd, CRI-O) reports the container terminated with reason OOMKilled, exit 137
    js = seed(srv, requests={"memory": "16Gi"})
    name = pod(srv, js, 0, "Running", node="gpu-0")
    sch.change_pod(
        srv,
        name,
        NS,
        lambda p: p["spec"]["containers"][0].setdefault("resources", {}).update(limits={"memory": "16Gi"}),
    )
    oom = {
        "exitCode": 137,
        "reason": "OOMKilled",
        "startedAt": "2026-01-01T00:00:00Z",
        "finishedAt": "2026-01-01T00:01:00Z",
    }
    sch.change_pod(srv, name, NS, sch.waiting("CrashLoopBackOff", "back-off 10s", restarts=1, last=oom))

    r = why(cli, kc)

    assert first_line(r) == (
        "OOMKilled: pod demo-node-0-0-x0 (node rank 0): container node was OOMKilled: it used more than "
        "its memory limit 16Gi (exit code 137)"
    )


# --- quota -------------------------------------------------------------------------------------------


def _jobs_of(srv: ApiServerDouble, js: JSON, rjob: str = "node") -> JSON:
    return srv.put_object(
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {
                "name": f"{js['metadata']['name']}-{rjob}-0",
                "namespace": NS,
                "labels": {c.JOBSET_NAME_LABEL: js["metadata"]["name"], c.JOBSET_RJOB_NAME_LABEL: rjob},
            },
            "spec": {"parallelism": 2, "completions": 2},
        }
    )


def test_a_resource_quota_that_refuses_the_pods(srv, kc, cli) -> None:
    js = seed(srv, gpus=8)
    job = _jobs_of(srv, js)
    sch.add_quota(srv, "gpu-quota", NS, hard={"requests.nvidia.com/gpu": "8"}, used={"requests.nvidia.com/gpu": "8"})
    refusal = sch.quota_refusal(
        "demo-node-0-0-abcde",
        "gpu-quota",
        "requests.nvidia.com/gpu=8",
        "requests.nvidia.com/gpu=8",
        "requests.nvidia.com/gpu=8",
    )
    srv.add_event(job, "FailedCreate", refusal, type="Warning", component="job-controller", count=4)
    srv.clear_requests()

    r = why(cli, kc)

    assert first_line(r) == (
        "QuotaExceeded: ResourceQuota gpu-quota refuses the pods of job demo: "
        "requests.nvidia.com/gpu 8 used of 8, a pod asks 8"
    )
    assert f"  event on Job demo-node-0: FailedCreate (×4): {refusal}" in r.stdout
    assert {q.resource for q in srv.requests} >= {"jobs.batch", "events", "resourcequotas"}


def test_with_events_forbidden_the_quota_is_compared_with_the_ask(srv, kc, cli) -> None:
    js = seed(srv, gpus=8)
    _jobs_of(srv, js)
    sch.add_quota(srv, "gpu-quota", NS, hard={"requests.nvidia.com/gpu": "8"}, used={"requests.nvidia.com/gpu": "4"})
    srv.forbid("list", "events")

    r = why(cli, kc)

    assert first_line(r) == (
        "QuotaExceeded: ResourceQuota gpu-quota leaves no room for the pods of job demo: "
        "requests.nvidia.com/gpu 4 used of 8, a pod asks 8"
    )
    assert r.stdout.splitlines()[-1] == (
        'not read: events: forbidden: User "system:serviceaccount:default:ktrain" cannot list resource "events" '
        'in API group "" in the namespace "default"'
    )


# --- queues and suspension --------------------------------------------------------------------------
# Kueue: apis/kueue/v1beta1/workload_types.go (QuotaReserved, Admitted); the message of a workload
# with no room is pkg/scheduler/flavorassigner/flavorassigner.go's, behind "couldn't assign flavors
# to pod set <name>: " (pkg/scheduler/scheduler.go).

KUEUE_PENDING = (
    "couldn't assign flavors to pod set node: insufficient unused quota for nvidia.com/gpu in flavor "
    "default-flavor, 8 more needed"
)


def test_not_admitted_by_kueue_names_the_condition_and_the_cluster_queue(srv, kc, cli) -> None:
    js = seed(srv, suspend=True, kueue_queue="team-a", gpus=8)
    sch.add_local_queue(srv, "team-a", NS, "gpu-cq")
    sch.add_workload(
        srv,
        js,
        "team-a",
        conditions=[sch.condition("QuotaReserved", "False", "Pending", KUEUE_PENDING)],
        pod_sets=[{"name": "node", "count": 2, "template": template(js)}],
    )

    r = why(cli, kc)

    assert r.exit_code == 1
    assert (
        first_line(r)
        == f"NotAdmitted: Kueue has not admitted job demo to ClusterQueue gpu-cq: Pending: {KUEUE_PENDING}"
    )
    assert "  Workload default/jobset-demo-3f2a1 (kueue.x-k8s.io/queue-name=team-a)" in r.stdout
    assert "  LocalQueue default/team-a → ClusterQueue gpu-cq" in r.stdout
    assert "  pod set node: 2 pods, each nvidia.com/gpu 8" in r.stdout
    assert "next: `kubectl describe clusterqueue gpu-cq` shows its quota and usage" in r.stdout


def test_a_queue_label_on_a_cluster_without_kueue_will_never_be_admitted(tmp_path, cli) -> None:
    with ApiServerDouble(crds={"jobset", "trainer"}) as srv:
        kc = str(srv.write_kubeconfig(tmp_path / "kc"))
        seed(srv, suspend=True, kueue_queue="team-a")
        r = why(cli, kc)
    assert r.exit_code == 1
    assert first_line(r) == (
        "NoKueue: job demo is suspended for Kueue queue team-a, but the cluster does not serve Kueue: "
        "nothing will ever admit it"
    )


def test_suspended_by_hand_points_to_resume(srv, kc, cli) -> None:
    seed(srv, suspend=True)
    r = why(cli, kc)
    assert (r.exit_code, first_line(r)) == (
        1,
        "Suspended: job demo is suspended (spec.suspend: true) and no queue will resume it",
    )
    assert "next: `ktrain job resume demo` resumes it" in r.stdout


# --- controllers ------------------------------------------------------------------------------------


def test_a_trainjob_without_jobset_after_a_while_suspects_the_trainer_controller(srv, kc, cli) -> None:
    srv.put_object(
        {
            "apiVersion": c.TRAINER_API_VERSION,
            "kind": "TrainJob",
            "metadata": {"name": "demo", "namespace": NS, "creationTimestamp": stamp(ago(20))},
            "spec": {"runtimeRef": {"name": "torch-distributed"}},
        }
    )
    r = why(cli, kc)
    assert first_line(r) == (
        "NoTrainerController: no JobSet was made for TrainJob demo in 20m: is the Trainer controller running?"
    )


def test_a_jobset_without_jobs_suspects_the_jobset_controller(srv, kc, cli) -> None:
    seed(srv, created=ago(20))
    r = why(cli, kc)
    assert first_line(r) == "NoJobSetController: JobSet demo has no Jobs after 20m: is the JobSet controller running?"


# --- running ------------------------------------------------------------------------------------------


def test_running_rank_0_stuck_at_the_rendezvous(srv, kc, cli) -> None:
    # torch: torch/distributed/elastic/agent/server/api.py ("[%s] Rendezvous'ing worker group"),
    # c10d's socket.cpp ("The server socket has failed to listen on ...")
    js = seed(srv)
    rank0 = pod(srv, js, 0, "Running", node="gpu-0")
    pod(srv, js, 1, "Running", node="gpu-1")
    srv.append_log(
        rank0,
        "W socket.cpp:464] [c10d] The server socket has failed to listen on [::]:29500.\n",
        timestamp=ago(13),
    )
    srv.append_log(rank0, "[default] Rendezvous'ing worker group\n", timestamp=ago(12))

    r = why(cli, kc)

    assert r.exit_code == 1
    assert first_line(r) == (
        "RendezvousWait: job demo runs but is stuck: rank 0 has waited 12m at the rendezvous for its peers"
    )
    assert "    [default] Rendezvous'ing worker group" in r.stdout


def test_running_exits_0_with_rank_0s_last_line(srv, kc, cli) -> None:
    js = seed(srv)
    rank0 = pod(srv, js, 0, "Running", node="gpu-0")
    pod(srv, js, 1, "Running", node="gpu-1")
    now = dt.datetime.now(dt.timezone.utc)
    srv.append_log(rank0, "[default] Rendezvous'ing worker group\n", timestamp=now - dt.timedelta(minutes=5))
    srv.append_log(rank0, "epoch 1 step 200 loss 0.31\n", timestamp=now - dt.timedelta(minutes=2))

    r = why(cli, kc)

    assert r.exit_code == 0, r.stdout
    assert r.stdout.splitlines() == [
        "Running: job demo is running (2 of 2 trainer pods)",
        "  last line of pod demo-node-0-0-x0 (node rank 0), 2m ago:",
        "    epoch 1 step 200 loss 0.31",
    ]


def test_ended_jobs(srv, kc, cli) -> None:
    seed(srv, "done")
    done = {
        "type": "Completed",
        "status": "True",
        "reason": "AllJobsCompleted",
        "message": "jobset completed successfully",
    }
    srv.set_status("jobsets", "done", {"conditions": [done]})
    seed(srv, "broke")
    failed = {
        "type": "Failed",
        "status": "True",
        "reason": "FailedJobs",
        "message": "jobset failed due to one or more job failures",
    }
    srv.set_status("jobsets", "broke", {"conditions": [failed]})

    ok = why(cli, kc, name="done")
    bad = why(cli, kc, name="broke")

    assert (ok.exit_code, first_line(ok)) == (0, "Succeeded: job done completed (AllJobsCompleted)")
    assert (bad.exit_code, first_line(bad)) == (
        1,
        "Failed: job broke failed: FailedJobs: jobset failed due to one or more job failures",
    )


# --- output, errors, RBAC --------------------------------------------------------------------------------


def test_json_output_for_scripts(srv, kc, cli) -> None:
    seed(srv, suspend=True)
    r = why(cli, kc, "-o", "json")
    assert r.exit_code == 1
    assert json.loads(r.stdout) == {
        "name": "demo",
        "namespace": "default",
        "state": "Suspended",
        "running": False,
        "reason": "Suspended",
        "message": "job demo is suspended (spec.suspend: true) and no queue will resume it",
        "evidence": ["JobSet default/demo: spec.suspend is true; it carries no kueue.x-k8s.io/queue-name label"],
        "next": "`ktrain job resume demo` resumes it",
        "unread": [],
    }


def test_errors_exit_above_1(srv, kc, cli) -> None:
    missing = why(cli, kc, name="nope")
    bad_format = why(cli, kc, "-o", "xml")
    srv.stop()
    down = why(cli, kc)
    assert missing.exit_code == ExitCode.NOT_FOUND and 'job "nope" not found' in missing.stderr
    assert bad_format.exit_code == ExitCode.USAGE
    assert down.exit_code == ExitCode.CLUSTER and missing.stdout == down.stdout == ""


def test_nodes_forbidden_decodes_the_scheduler_message_alone_and_says_what_was_not_read(srv, kc, cli) -> None:
    js = seed(srv, gpus=16)
    sch.refuse_scheduling(srv, pod(srv, js, 0), NS, sch.RECORDED["gpu16"])
    srv.forbid("list", "nodes")

    r = why(cli, kc)

    assert r.exit_code == 1
    assert first_line(r) == (
        "Insufficient: each pod asks 16 nvidia.com/gpu; 8 of 8 nodes lack that much nvidia.com/gpu "
        "(the nodes could not be read to say more)"
    )
    assert r.stdout.splitlines()[-1] == (
        'not read: nodes: forbidden: User "system:serviceaccount:default:ktrain" cannot list resource "nodes" '
        'in API group "" at the cluster scope'
    )


def test_node_pods_forbidden_still_decodes_a_busy_cluster_from_allocatable(srv, kc, cli) -> None:
    js = seed(srv, gpus=4)
    sch.add_nodes(srv, 2, allocatable=GPU_NODE)
    message = (
        "0/2 nodes are available: 2 Insufficient nvidia.com/gpu. preemption: 0/2 nodes are available: "
        "2 No preemption victims found for incoming pod."
    )
    sch.refuse_scheduling(srv, pod(srv, js, 0), NS, message)
    srv.forbid("list", "pods", all_namespaces=True)  # a namespaced Role: the job's pods are read, others' not

    r = why(cli, kc)

    assert first_line(r) == (
        "Insufficient: each pod asks 4 nvidia.com/gpu; nodes have up to 8, but other pods hold it now "
        "(what they hold could not be read)"
    )
    assert r.stdout.splitlines()[-1] == (
        "not read: the pods on the nodes (what they have free): forbidden: User "
        '"system:serviceaccount:default:ktrain" cannot list resource "pods" in API group "" at the cluster scope'
    )


def test_a_trainjob_we_may_not_read_leaves_the_jobset_to_diagnose(srv, kc, cli) -> None:
    seed(srv, suspend=True)
    srv.forbid("get", "trainjobs")
    r = why(cli, kc)
    assert first_line(r).startswith("Suspended: job demo is suspended")
    assert r.stdout.splitlines()[-1].startswith('not read: trainjobs.trainer.kubeflow.org "demo" is forbidden: User ')


def test_pods_forbidden_is_said_not_guessed(srv, kc, cli) -> None:
    seed(srv)
    srv.forbid("list", "pods")
    r = why(cli, kc)
    assert r.exit_code == 1
    assert first_line(r) == "Unknown: job demo is Created; its pods could not be read, so why it waits is not known"
    assert "not read: pods is forbidden: User" in r.stdout


def test_server_text_reaches_the_terminal_escaped(srv, kc, cli) -> None:
    js = seed(srv)
    sch.refuse_scheduling(
        srv, pod(srv, js, 0), NS, "0/1 nodes are available: \x1b[2J\x1b]0;owned\x07 1 weird reason.\nline"
    )
    condition = {"type": "Ready", "status": "False", "reason": "X", "message": "\x1b[31mred\u202etxt"}
    srv.set_status("jobsets", "demo", {"conditions": [condition]})

    r = why(cli, kc)
    got = cli("job", "get", "demo", "--kubeconfig", kc)

    for out in (r.stdout, got.stdout):
        assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out
        assert "\\x1b[2J\\x1b]0;owned\\x07" in out
    assert "weird reason.\\nline" in r.stdout
    assert "\\x1b[31mred\\u202etxt" in got.stdout  # the conditions table too


# --- the same verdict in `job get` and `job wait` ---------------------------------------------------------


def test_job_get_shows_the_verdict_under_the_state(srv, kc, cli) -> None:
    js = seed(srv, gpus=16)
    sch.add_nodes(srv, 8, allocatable=GPU_NODE)
    sch.refuse_scheduling(srv, pod(srv, js, 0), NS, sch.RECORDED["gpu16"])

    text = cli("job", "get", "demo", "--kubeconfig", kc)
    doc = json.loads(cli("job", "get", "demo", "--kubeconfig", kc, "-o", "json").stdout)
    verdict = why(cli, kc)

    lines = text.stdout.splitlines()
    state = next(i for i, line in enumerate(lines) if line.startswith("State:"))
    assert lines[state + 1] == "Why:        " + first_line(verdict)
    assert lines[state + 2] == "Next:       ask for at most 8 nvidia.com/gpu per pod (--gpus) and more nodes (--nodes)"
    assert doc["why"]["reason"] == "TooLarge" and doc["why"]["running"] is False
    assert doc["why"]["message"] == first_line(verdict).split(": ", 1)[1]


def test_job_wait_progress_line_is_the_verdict(srv, kc, cli) -> None:
    js = seed(srv, node_selector={"gpu-type": "a100"})
    sch.add_nodes(srv, 2, "h", allocatable=GPU_NODE, labels={"gpu-type": "h100"})
    sch.refuse_scheduling(srv, pod(srv, js, 0), NS, sch.RECORDED["selector-condition"])

    r = cli("job", "wait", "demo", "--for", "running", "--timeout", "1s", "--kubeconfig", kc)
    verdict = why(cli, kc)

    assert r.exit_code == ExitCode.TIMEOUT
    assert r.stderr.splitlines()[0] == "waiting: " + first_line(verdict)
    assert "(it is Created: NoMatchingNode: no node matches nodeSelector gpu-type=a100" in r.stderr
