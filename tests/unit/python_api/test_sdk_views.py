"""What ktrain's TrainerClient shows of a cluster, in the Kubeflow SDK's types (ktrain/python_api/sdk_views.py):

- `get_job_events` against the API-server double, and against the Kubeflow SDK's (0.5) own method
  given the same objects and events. The SDK side runs its Kubernetes backend's real `get_job_events`
  (and the `get_job` it calls) with its `custom_api` and `core_api` answering from the double's store,
  as tests/unit/python_api/test_conversion.py stubs `custom_api` for `train`;
- what `TrainerClient` returns prints as the Kubeflow SDK's (issue #36): the same cluster read by the
  SDK and by ktrain through the API-server double gives equal reprs (device counts, creation times
  with the SDK's tzinfo); a TrainJob with only the SDK's arguments carries no ktrain annotation."""

from __future__ import annotations

import copy
import datetime as dt
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
import yaml
from apiserver import ApiServerDouble, owner_reference
from cli.jobs_double import pod
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ktrain
from ktrain import constants as c
from ktrain.errors import (
    ApiError,
    NotFoundError,
    NotProvidedError,
    UsageError,
)

REPO = Path(__file__).resolve().parents[3]
NS = "team-a"
T0 = dt.datetime(2025, 3, 1, 12, 0, 0, tzinfo=dt.timezone.utc)
Obj = dict[str, Any]


@pytest.fixture
def srv() -> Iterator[ApiServerDouble]:
    with ApiServerDouble() as double:
        double.add_namespace(NS)
        for name in ("torch-distributed", "deepspeed-distributed", "torchtune-llama3.2-1b"):
            double.put_object(yaml.safe_load((REPO / "runtimes" / f"{name}.yaml").read_text()))
        yield double


@pytest.fixture
def client(srv: ApiServerDouble, tmp_path: Path) -> ktrain.TrainerClient:
    path = srv.write_kubeconfig(tmp_path / "kubeconfig", namespace=NS)
    return ktrain.TrainerClient(ktrain.KubernetesBackendConfig(config_file=str(path)))


def train_fn(lr):  # type: ignore[no-untyped-def]
    print("lr", lr)  # noqa: T201 - runs in the pod


def at(seconds: int) -> dt.datetime:
    return T0 + dt.timedelta(seconds=seconds)


def _job(srv: ApiServerDouble, client: ktrain.TrainerClient) -> tuple[str, Obj]:
    """A TrainJob as `train` submits it, and its JobSet as the Trainer controller would make it."""
    name = client.train(trainer=ktrain.CustomTrainer(func=train_fn, func_args={"lr": 1}, num_nodes=2))
    jobset = ktrain.render(runtime="torch-distributed", name=name, namespace=NS, num_nodes=2)[0]
    jobset["metadata"]["ownerReferences"] = [owner_reference(srv.get_object("trainjobs", name, NS))]
    return name, srv.put_object(jobset)


def _older(srv: ApiServerDouble, obj: Obj) -> Obj:
    """The pod, made an hour older (a restarted step's first pod)."""
    stored = srv.get_object("pods", obj["metadata"]["name"], NS)
    assert stored is not None
    stored["metadata"]["creationTimestamp"] = "2025-01-01T00:00:00Z"
    return srv.put_object(stored)


def _indexed(srv: ApiServerDouble, obj: Obj) -> Obj:
    """The pod with the completion index as a label too, as the Job controller sets it since
    Kubernetes 1.28 (the SDK's get_job reads the label)."""
    stored = srv.get_object("pods", obj["metadata"]["name"], NS)
    assert stored is not None
    index = stored["metadata"]["annotations"][c.JOB_COMPLETION_INDEX_ANNOTATION]
    stored["metadata"]["labels"][c.JOB_COMPLETION_INDEX_ANNOTATION] = index
    return srv.put_object(stored)


def _seed_events(srv: ApiServerDouble, client: ktrain.TrainerClient) -> dict[str, Any]:
    """A job with two nodes (node-1 restarted), and events about it and about objects that are not its."""
    name, jobset = _job(srv, client)
    other, other_jobset = _job(srv, client)
    trainjob = srv.get_object("trainjobs", name, NS)
    assert trainjob is not None
    old = _older(srv, _indexed(srv, pod(srv, jobset, rank=1, suffix="old")))
    node0, node1 = (_indexed(srv, p) for p in (pod(srv, jobset, rank=0), pod(srv, jobset, rank=1, suffix="new")))
    stranger = _indexed(srv, pod(srv, other_jobset, rank=0))
    lone = srv.add_pod("node-0", NS)  # a pod named as the SDK's step name, of no job
    add = srv.add_event
    add(node1, "Started", "Started container node", namespace=NS, timestamp=at(50))
    add(trainjob, "Created", "TrainJob created", namespace=NS, timestamp=at(0))
    add(jobset, "SuccessfulCreate", "created JobSet", namespace=NS, timestamp=at(10))
    add(
        ("Job", f"{name}-node-0"),
        "SuccessfulCreate",
        f"Created pod: {node0['metadata']['name']}",
        namespace=NS,
        timestamp=at(20),
    )
    add(node0, "Scheduled", "assigned to n1", namespace=NS, timestamp=at(30))
    add(node0, "Pulled", "image pulled", namespace=NS, timestamp=at(31))
    add(old, "Killing", "Stopping container node", namespace=NS, timestamp=at(5))  # a replaced pod
    add(stranger, "Scheduled", "another job's pod", namespace=NS, timestamp=at(1))
    add(("Job", f"{other}-node-0"), "SuccessfulCreate", "another job's Job", namespace=NS, timestamp=at(2))
    add(lone, "Scheduled", "a pod called node-0", namespace=NS, timestamp=at(3))
    add(("ConfigMap", name), "Updated", "not a kind of the job's", namespace=NS, timestamp=at(4))
    add(("TrainJob", name), "Elsewhere", "the same name in another namespace", namespace="default", timestamp=at(6))
    return {"name": name, "node0": node0["metadata"]["name"], "node1": node1["metadata"]["name"]}


def _scheduler_event(srv: ApiServerDouble, pod_name: str, when: dt.datetime) -> Obj:
    """A FailedScheduling event as kube-scheduler writes it (events.k8s.io/v1): eventTime, no firstTimestamp."""
    stamp = when.strftime("%Y-%m-%dT%H:%M:%S.000000Z")
    return srv.put_object(
        {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": f"{pod_name}.sched", "namespace": NS},
            "involvedObject": {"kind": "Pod", "name": pod_name, "namespace": NS},
            "reason": "FailedScheduling",
            "message": "0/3 nodes are available: 3 Insufficient nvidia.com/gpu.",
            "type": "Warning",
            "eventTime": stamp,
            "firstTimestamp": None,
            "lastTimestamp": None,
            "reportingComponent": "default-scheduler",
            "reportingInstance": "default-scheduler-n1",
            "action": "Scheduling",
        }
    )


def test_events_of_the_job_its_jobset_jobs_and_pods_oldest_first(
    srv: ApiServerDouble, client: ktrain.TrainerClient
) -> None:
    seeded = _seed_events(srv, client)
    name = seeded["name"]
    events = client.get_job_events(name)
    assert all(isinstance(e, ktrain.Event) for e in events)
    assert [(e.event_time, e.involved_object_kind, e.involved_object_name, e.reason, e.message) for e in events] == [
        (at(0), "TrainJob", name, "Created", "TrainJob created"),
        (at(10), "JobSet", name, "SuccessfulCreate", "created JobSet"),
        (at(20), "Job", f"{name}-node-0", "SuccessfulCreate", f"Created pod: {seeded['node0']}"),
        (at(30), "Pod", seeded["node0"], "Scheduled", "assigned to n1"),
        (at(31), "Pod", seeded["node0"], "Pulled", "image pulled"),
        (at(50), "Pod", seeded["node1"], "Started", "Started container node"),
    ]
    # The scheduler's events have only an eventTime: placed by it (the SDK leaves them out).
    _scheduler_event(srv, seeded["node1"], at(40))
    later = client.get_job_events(name)
    assert [(e.reason, e.event_time) for e in later][5:] == [("FailedScheduling", at(40)), ("Started", at(50))]


def test_event_reads_fail_as_the_other_reads_do(srv: ApiServerDouble, client: ktrain.TrainerClient) -> None:
    name, _jobset = _job(srv, client)
    assert client.get_job_events(name) == []  # nothing happened yet
    with pytest.raises(NotFoundError) as missing:
        client.get_job_events("gone")
    assert isinstance(missing.value, RuntimeError)  # the SDK raises RuntimeError
    with pytest.raises(UsageError):
        client.get_job_events("Not/A-Name")
    srv.forbid("list", "events", namespace=NS)
    with pytest.raises(ApiError) as denied:
        client.get_job_events(name)
    assert denied.value.status == 403 and isinstance(denied.value, RuntimeError)
    reads = [r for r in srv.requests if r.resource == "events"]
    assert reads and all(r.verb == "list" and r.namespace == NS for r in reads)  # one list per call, paged
    assert all(r.query.get("limit") for r in reads)


def test_events_on_a_local_backend_are_not_provided() -> None:
    local = ktrain.TrainerClient(ktrain.LocalProcessBackendConfig())
    with pytest.raises(NotProvidedError, match="no Kubernetes events") as err:
        local.get_job_events("any")
    assert isinstance(err.value, NotImplementedError)  # what the SDK's local backends raise


json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=8)),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=5), inner, max_size=3)),
    max_leaves=8,
)
stamps = st.one_of(
    json_values,
    st.datetimes(timezones=st.sampled_from([None, dt.timezone.utc])).map(lambda d: d.isoformat()),
    st.just("2025-03-01T12:00:00Z"),
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    events=st.lists(
        st.fixed_dictionaries(
            {
                "metadata": st.one_of(st.just({"name": "e"}), json_values),
                "involvedObject": st.one_of(
                    st.fixed_dictionaries(
                        {
                            "kind": st.sampled_from(["Pod", "Job", "TrainJob", "ConfigMap"]),
                            "name": st.sampled_from(["j", "j-node-0", "p"]),
                        }
                    ),
                    json_values,
                ),
                "firstTimestamp": stamps,
                "eventTime": stamps,
                "message": json_values,
                "reason": json_values,
            }
        ),
        max_size=8,
    ),
    replicas=json_values,
)
def test_any_event_list_gives_the_jobs_events_in_order(events: list[Obj], replicas: Any) -> None:
    """Whatever a server answers (fields of any type, times with and without a zone), no crash:
    only the job's kinds and names, sorted by time."""
    from ktrain.python_api.sdk_views import events_of

    jobset = {"metadata": {"name": "j"}, "spec": {"replicatedJobs": [{"name": "node", "replicas": replicas}]}}
    out = events_of("j", jobset, [], events)
    assert all(e.involved_object_kind in {"Pod", "Job", "TrainJob"} for e in out)
    assert all(e.involved_object_name in {"j", "j-node-0"} for e in out)
    assert [e.event_time for e in out] == sorted(e.event_time for e in out)
    assert all(isinstance(e.message, str) and isinstance(e.reason, str) for e in out)


# --- the SDK's get_job_events on the same objects and events --------------------------------------


class _Answer:
    def __init__(self, value: Any = None, error: BaseException | None = None) -> None:
        self.value, self.error = value, error

    def get(self, timeout: float | None = None) -> Any:
        if self.error is not None:
            raise self.error
        return copy.deepcopy(self.value)


class _Dict:
    """A client model's stand-in: `to_dict()` is all the SDK calls on a pod list."""

    def __init__(self, data: Obj) -> None:
        self.data = data

    def to_dict(self) -> Obj:
        return copy.deepcopy(self.data)


class DoubleCustomObjectsApi:
    def __init__(self, srv: ApiServerDouble) -> None:
        self.srv = srv

    def get_namespaced_custom_object(
        self, group: str, version: str, namespace: str, plural: str, name: str, **kwargs: Any
    ) -> _Answer:
        from kubernetes import client as k8s

        found = self.srv.get_object(plural, name, namespace)
        return _Answer(found) if found is not None else _Answer(error=k8s.ApiException(status=404))

    def get_cluster_custom_object(self, group: str, version: str, plural: str, name: str, **kwargs: Any) -> _Answer:
        return _Answer(self.srv.get_object(plural, name))


class DoubleCoreApi:
    def __init__(self, srv: ApiServerDouble) -> None:
        self.srv = srv

    def list_namespaced_pod(self, namespace: str, label_selector: str, **kwargs: Any) -> _Answer:
        from apiserver.selectors import labels_match, parse_label_selector

        wanted = parse_label_selector(label_selector)  # the double's own selector rules
        pods = [p for p in self.srv.objects("pods", namespace) if labels_match(wanted, p)]
        return _Answer(_Dict({"items": pods}))

    def list_namespaced_event(self, namespace: str, **kwargs: Any) -> _Answer:
        from kubeflow.trainer.backends.kubernetes.backend import models  # type: ignore[attr-defined]

        return _Answer(models.IoK8sApiCoreV1EventList.from_dict({"items": self.srv.objects("events", namespace)}))


def sdk_events(srv: ApiServerDouble, name: str) -> list[Any]:
    from kubeflow import trainer as sdk
    from kubeflow.trainer.backends.kubernetes.backend import KubernetesBackend
    from kubernetes import client as k8s

    with mock.patch.object(KubernetesBackend, "verify_backend", lambda self: None):
        client = sdk.TrainerClient(sdk.KubernetesBackendConfig(namespace=NS, client_configuration=k8s.Configuration()))
    client.backend.custom_api = DoubleCustomObjectsApi(srv)
    client.backend.core_api = DoubleCoreApi(srv)
    return list(client.get_job_events(name))


def fields(event: Any) -> tuple[str, str, str, str, dt.datetime]:
    return (event.involved_object_kind, event.involved_object_name, event.reason, event.message, event.event_time)


def test_the_same_events_as_the_sdks_get_job_events(srv: ApiServerDouble, client: ktrain.TrainerClient) -> None:
    seeded = _seed_events(srv, client)
    name = seeded["name"]
    _scheduler_event(srv, seeded["node1"], at(40))
    for reason in ("Pulling", "Created", "Started"):  # at the same second: both keep the list's order
        srv.add_event(("Pod", seeded["node0"]), reason, reason.lower(), namespace=NS, timestamp=at(32))
    theirs = [fields(e) for e in sdk_events(srv, name)]
    ours = [fields(e) for e in client.get_job_events(name)]
    # Where they differ on purpose (docs/python-api.md): the JobSet's Jobs, which the SDK looks for
    # under its step names (`node-0`), and the scheduler's events, which have no firstTimestamp.
    extra = {(k, n, r) for k, n, r, *_ in ours if k == "Job" or r == "FailedScheduling"}
    assert extra == {("Job", f"{name}-node-0", "SuccessfulCreate"), ("Pod", seeded["node1"], "FailedScheduling")}
    # ... and the SDK's step names catch a pod of no job that is named like a step.
    assert [e[1:3] for e in theirs if e[1] == "node-0"] == [("node-0", "Scheduled")]
    assert [e for e in ours if e[:3] not in extra] == [e for e in theirs if e[1] != "node-0"]
    assert len(theirs) == 9  # the TrainJob, the JobSet, the newest pods (6 events) and the pod called node-0


# --- printed as the SDK prints (issue #36) -----------------------------------------------------


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ApiServerDouble, str]]:
    with ApiServerDouble() as srv:
        srv.add_namespace(NS)
        for name in ("torch-distributed", "torchtune-llama3.2-1b", "deepspeed-distributed"):
            srv.put_object(yaml.safe_load((REPO / "runtimes" / f"{name}.yaml").read_text()))
        yield srv, str(srv.write_kubeconfig(tmp_path_factory.mktemp("kube") / "kubeconfig", namespace=NS))


def _sdk_client(kubeconfig: str) -> Any:
    from kubeflow.trainer import KubernetesBackendConfig, TrainerClient

    return TrainerClient(KubernetesBackendConfig(config_file=kubeconfig, namespace=NS))


@pytest.mark.double
def test_list_runtimes_prints_as_the_sdks(cluster: tuple[ApiServerDouble, str]) -> None:
    _srv, kubeconfig = cluster
    theirs = [repr(r) for r in _sdk_client(kubeconfig).list_runtimes()]
    ours = [
        repr(r) for r in ktrain.TrainerClient(ktrain.KubernetesBackendConfig(config_file=kubeconfig)).list_runtimes()
    ]
    assert ours == theirs
    assert any("device_count='2.0'" in r for r in ours)  # torchtune's `nvidia.com/gpu: 2`


@pytest.mark.double
def test_a_jobs_creation_time_has_the_sdks_tzinfo(cluster: tuple[ApiServerDouble, str]) -> None:
    _srv, kubeconfig = cluster
    client = ktrain.TrainerClient(ktrain.KubernetesBackendConfig(config_file=kubeconfig))
    name = client.train(trainer=ktrain.CustomTrainerContainer(image="busybox"))
    ours = client.get_job(name).creation_timestamp
    theirs = _sdk_client(kubeconfig).get_job(name).creation_timestamp
    assert (repr(ours), type(ours.tzinfo)) == (repr(theirs), type(theirs.tzinfo))
    client.delete_job(name)


@pytest.mark.double
def test_only_a_call_with_options_notes_the_node_count(cluster: tuple[ApiServerDouble, str]) -> None:
    srv, kubeconfig = cluster
    client = ktrain.TrainerClient(ktrain.KubernetesBackendConfig(config_file=kubeconfig))
    tune = ktrain.BuiltinTrainer(config=ktrain.TorchTuneConfig())
    plain = client.train(runtime="torchtune-llama3.2-1b", trainer=tune)
    with_nodes = client.train(
        runtime="torchtune-llama3.2-1b", trainer=ktrain.BuiltinTrainer(ktrain.TorchTuneConfig(num_nodes=1))
    )
    labelled = client.train(runtime="torchtune-llama3.2-1b", trainer=tune, options=[ktrain.options.Labels({"a": "b"})])
    annotations = {
        name: (srv.get_object("trainjobs", name, NS)["metadata"].get("annotations") or {})
        for name in (plain, with_nodes, labelled)
    }
    assert c.NODES_ANNOTATION not in annotations[plain]  # the SDK's TrainJob, as the SDK sends it
    assert c.NODES_ANNOTATION not in annotations[with_nodes]
    assert annotations[labelled][c.NODES_ANNOTATION] == "1"
    assert client.get_job(plain).num_nodes == 1  # read from the runtime instead
    for name in (plain, with_nodes, labelled):
        client.delete_job(name)
