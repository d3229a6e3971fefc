"""The API-server double, exercised only through the official `kubernetes` client."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import urllib3
from apiserver import ApiServerDouble, owner_reference
from apiserver.server import THREAD_PREFIX
from kubernetes import client, config, watch

# The generated API modules load lazily and CoreV1Api alone takes ~0.5 s; import them with the
# test module so that cost is not charged to whichever test happens to run first.
from kubernetes.client import ApiextensionsV1Api, CoreV1Api, CustomObjectsApi

TOKEN = "t0k3n"
JS_GROUP, JS_VERSION = "jobset.x-k8s.io", "v1alpha2"
JSON = dict[str, Any]


@pytest.fixture
def srv() -> Iterator[ApiServerDouble]:
    with ApiServerDouble(token=TOKEN) as double:
        yield double


@pytest.fixture
def api(srv: ApiServerDouble) -> Iterator[client.ApiClient]:
    api_client = srv.api_client()
    yield api_client
    api_client.close()


@pytest.fixture
def core(api: client.ApiClient) -> CoreV1Api:
    return CoreV1Api(api)


@pytest.fixture
def custom(api: client.ApiClient) -> CustomObjectsApi:
    return CustomObjectsApi(api)


def status_of(exc: client.ApiException) -> JSON:
    body = json.loads(exc.body)
    assert body["kind"] == "Status" and body["apiVersion"] == "v1"
    assert body["metadata"] == {} and body["status"] == "Failure"
    assert body["code"] == exc.status
    return body


def configmap(name: str, labels: dict[str, str] | None = None, **data: str) -> JSON:
    meta: JSON = {"name": name}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data}


def jobset(name: str, replicas: Any = 1) -> JSON:
    pod_spec = {"containers": [{"name": "node", "image": "trainer:latest"}]}
    return {
        "apiVersion": f"{JS_GROUP}/{JS_VERSION}",
        "kind": "JobSet",
        "metadata": {"name": name},
        "spec": {
            "replicatedJobs": [
                {
                    "name": "node",
                    "replicas": replicas,
                    "template": {"spec": {"template": {"spec": pod_spec}}},
                }
            ]
        },
    }


def create_jobset(custom: client.CustomObjectsApi, body: JSON, **kwargs: Any) -> JSON:
    result: JSON = custom.create_namespaced_custom_object(JS_GROUP, JS_VERSION, "default", "jobsets", body, **kwargs)
    return result


def owned_configmap(name: str, owner: JSON) -> JSON:
    body = configmap(name)
    body["metadata"]["ownerReferences"] = [owner_reference(owner)]
    return body


def get_jobset(custom: client.CustomObjectsApi, name: str) -> JSON:
    result: JSON = custom.get_namespaced_custom_object(JS_GROUP, JS_VERSION, "default", "jobsets", name)
    return result


def with_content_type(call: Any, *args: Any, content_type: str, **kwargs: Any) -> Any:
    """`call(*args, _content_type=...)` on kubernetes >= 36. Older clients (the Kubeflow SDK in the
    test extra caps kubernetes below 36) take no `_content_type` and pick the Content-Type
    themselves, but their default headers win over it (`ApiClient.__call_api`)."""
    try:
        return call(*args, _content_type=content_type, **kwargs)
    except client.ApiTypeError:  # raised before anything is sent
        api = call.__self__.api_client
        api.set_default_header("Content-Type", content_type)
        try:
            return call(*args, **kwargs)
        finally:
            api.default_headers.pop("Content-Type", None)


def as_dict(answer: Any) -> JSON:
    """A Status as a dict: kubernetes >= 36 returns the JSON, older clients a V1Status model."""
    data: JSON = answer if isinstance(answer, dict) else client.ApiClient().sanitize_for_serialization(answer)
    return data


def apply_configmap(core: client.CoreV1Api, body: JSON, manager: str, **kwargs: Any) -> Any:
    return with_content_type(
        core.patch_namespaced_config_map,
        body["metadata"]["name"],
        "default",
        body,
        field_manager=manager,
        content_type="application/apply-patch+yaml",
        **kwargs,
    )


# --- discovery and configuration --------------------------------------------------------------


def test_discovery_lists_only_the_configured_crd_groups() -> None:
    with ApiServerDouble(crds={"jobset", "coscheduling"}) as double:
        api_client = double.api_client()
        try:
            groups = {g.name for g in client.ApisApi(api_client).get_api_versions().groups}
            crds = ApiextensionsV1Api(api_client).list_custom_resource_definition()
            core_resources = client.CoreV1Api(api_client).get_api_resources()
            custom = client.CustomObjectsApi(api_client)
            with pytest.raises(client.ApiException) as missing:
                custom.list_namespaced_custom_object("trainer.kubeflow.org", "v1alpha1", "default", "trainjobs")
        finally:
            api_client.close()
    assert {"jobset.x-k8s.io", "scheduling.x-k8s.io", "batch"} <= groups
    assert "scheduling.volcano.sh" not in groups and "trainer.kubeflow.org" not in groups
    assert sorted(c.metadata.name for c in crds.items) == [
        "jobsets.jobset.x-k8s.io",
        "podgroups.scheduling.x-k8s.io",
    ]
    assert all(
        any(cond.type == "Established" and cond.status == "True" for cond in c.status.conditions) for c in crds.items
    )
    names = {r.name for r in core_resources.resources}
    expected = {"pods", "pods/log", "configmaps", "secrets", "events", "namespaces", "services"}
    assert expected <= names
    assert missing.value.status == 404
    assert status_of(missing.value)["message"] == "the server could not find the requested resource"


def test_group_resource_list_describes_cluster_and_namespaced_trainer_types(
    api: client.ApiClient,
) -> None:
    resources = client.CustomObjectsApi(api).get_api_resources("trainer.kubeflow.org", "v1alpha1")
    scope = {r.name: r.namespaced for r in resources.resources}
    assert scope["trainjobs"] is True
    assert scope["trainingruntimes"] is True
    assert scope["clustertrainingruntimes"] is False
    assert "trainjobs/status" in scope


def test_written_kubeconfig_is_loadable_by_the_client(srv: ApiServerDouble, tmp_path: Path) -> None:
    path = srv.write_kubeconfig(tmp_path / "kubeconfig", namespace="team-a", context="ctx")
    _contexts, active = config.list_kube_config_contexts(config_file=str(path))
    api_client = config.new_client_from_config(config_file=str(path), context="ctx")
    try:
        version = client.VersionApi(api_client).get_code()
    finally:
        api_client.close()
    assert active["name"] == "ctx" and active["context"]["namespace"] == "team-a"
    assert version.git_version == "v1.33.0"


# --- CRUD ---------------------------------------------------------------------------------------


def test_configmap_create_get_list_delete(core: client.CoreV1Api) -> None:
    created = core.create_namespaced_config_map("default", configmap("cfg", k="v"))
    fetched = core.read_namespaced_config_map("cfg", "default")
    listed = core.list_namespaced_config_map("default")
    deleted = as_dict(core.delete_namespaced_config_map("cfg", "default"))
    with pytest.raises(client.ApiException) as gone:
        core.read_namespaced_config_map("cfg", "default")

    assert created.metadata.uid and created.metadata.creation_timestamp
    assert int(created.metadata.resource_version) > 0
    assert fetched.data == {"k": "v"} and fetched.metadata.uid == created.metadata.uid
    assert [c.metadata.name for c in listed.items] == ["cfg"]
    assert int(listed.metadata.resource_version) >= int(created.metadata.resource_version)
    assert deleted["kind"] == "Status" and deleted["status"] == "Success"
    assert deleted["details"]["uid"] == created.metadata.uid
    body = status_of(gone.value)
    assert gone.value.status == 404
    assert body["reason"] == "NotFound"
    assert body["message"] == 'configmaps "cfg" not found'
    assert body["details"] == {"name": "cfg", "kind": "configmaps"}


def test_duplicate_create_answers_409_already_exists(core: client.CoreV1Api) -> None:
    core.create_namespaced_config_map("default", configmap("dup"))
    with pytest.raises(client.ApiException) as err:
        core.create_namespaced_config_map("default", configmap("dup"))
    body = status_of(err.value)
    assert err.value.status == 409
    assert body["reason"] == "AlreadyExists"
    assert body["message"] == 'configmaps "dup" already exists'


def test_jobset_create_get_list_delete_through_custom_objects(
    custom: client.CustomObjectsApi,
) -> None:
    created = create_jobset(custom, jobset("train"))
    fetched = get_jobset(custom, "train")
    listed = custom.list_namespaced_custom_object(JS_GROUP, JS_VERSION, "default", "jobsets")
    deleted = custom.delete_namespaced_custom_object(JS_GROUP, JS_VERSION, "default", "jobsets", "train")
    remaining = custom.list_namespaced_custom_object(JS_GROUP, JS_VERSION, "default", "jobsets")

    assert created["metadata"]["generation"] == 1
    assert fetched["metadata"]["uid"] == created["metadata"]["uid"]
    assert listed["kind"] == "JobSetList"
    assert [i["metadata"]["name"] for i in listed["items"]] == ["train"]
    assert listed["items"][0]["kind"] == "JobSet"  # custom resource list items keep TypeMeta
    assert deleted["metadata"]["name"] == "train"  # custom resources return the deleted object
    assert remaining["items"] == []


def test_jobset_duplicate_is_409_naming_the_group(custom: client.CustomObjectsApi) -> None:
    create_jobset(custom, jobset("twice"))
    with pytest.raises(client.ApiException) as err:
        create_jobset(custom, jobset("twice"))
    body = status_of(err.value)
    assert body["message"] == 'jobsets.jobset.x-k8s.io "twice" already exists'
    assert body["details"] == {"name": "twice", "group": JS_GROUP, "kind": "jobsets"}


def test_create_in_missing_namespace_is_404(core: client.CoreV1Api) -> None:
    with pytest.raises(client.ApiException) as err:
        core.create_namespaced_config_map("nowhere", configmap("x"))
    assert err.value.status == 404
    assert status_of(err.value)["message"] == 'namespaces "nowhere" not found'


def test_invalid_name_is_422_with_causes(core: client.CoreV1Api) -> None:
    with pytest.raises(client.ApiException) as err:
        core.create_namespaced_config_map("default", configmap("Bad_Name"))
    body = status_of(err.value)
    assert err.value.status == 422 and body["reason"] == "Invalid"
    assert body["message"].startswith(
        'ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain'
    )
    assert body["details"]["kind"] == "ConfigMap"
    assert body["details"]["causes"][0]["field"] == "metadata.name"
    assert body["details"]["causes"][0]["reason"] == "FieldValueInvalid"


def test_update_with_stale_resource_version_conflicts(core: client.CoreV1Api) -> None:
    first = core.create_namespaced_config_map("default", configmap("cas", k="1"))
    first.data = {"k": "2"}
    core.replace_namespaced_config_map("cas", "default", first)
    first.data = {"k": "3"}  # still carries the old resourceVersion
    with pytest.raises(client.ApiException) as err:
        core.replace_namespaced_config_map("cas", "default", first)
    assert err.value.status == 409
    assert "the object has been modified" in status_of(err.value)["message"]
    assert core.read_namespaced_config_map("cas", "default").data == {"k": "2"}


def test_generation_bumps_on_spec_changes_only(custom: client.CustomObjectsApi) -> None:
    create_jobset(custom, jobset("gen"))
    labelled = custom.patch_namespaced_custom_object(
        JS_GROUP, JS_VERSION, "default", "jobsets", "gen", {"metadata": {"labels": {"a": "b"}}}
    )
    suspended = custom.patch_namespaced_custom_object(
        JS_GROUP, JS_VERSION, "default", "jobsets", "gen", {"spec": {"suspend": True}}
    )
    assert labelled["metadata"]["generation"] == 1
    assert suspended["metadata"]["generation"] == 2
    rv = [int(o["metadata"]["resourceVersion"]) for o in (labelled, suspended)]
    assert rv[1] > rv[0]


def test_strategic_merge_patch_on_custom_resource_is_415(custom: client.CustomObjectsApi) -> None:
    create_jobset(custom, jobset("smp"))
    with pytest.raises(client.ApiException) as err:
        with_content_type(
            custom.patch_namespaced_custom_object,
            JS_GROUP,
            JS_VERSION,
            "default",
            "jobsets",
            "smp",
            {"spec": {"suspend": True}},
            content_type="application/strategic-merge-patch+json",
        )
    assert err.value.status == 415
    assert status_of(err.value)["reason"] == "UnsupportedMediaType"


def test_secret_string_data_is_folded_into_base64_data(core: client.CoreV1Api) -> None:
    created = core.create_namespaced_secret("default", {"metadata": {"name": "s"}, "stringData": {"token": "abc"}})
    assert created.data == {"token": "YWJj"}
    assert created.string_data is None
    assert created.type == "Opaque"


def test_list_pages_with_limit_and_continue(core: client.CoreV1Api) -> None:
    for name in ("a", "b", "c"):
        core.create_namespaced_config_map("default", configmap(name))
    first = core.list_namespaced_config_map("default", limit=2)
    rest = core.list_namespaced_config_map("default", limit=2, _continue=first.metadata._continue)
    assert [c.metadata.name for c in first.items] == ["a", "b"]
    assert first.metadata.remaining_item_count == 1
    assert [c.metadata.name for c in rest.items] == ["c"]
    assert rest.metadata._continue is None


# --- selectors ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("app=trainer", ["a", "b"]),
        ("app==trainer,role=worker", ["b"]),
        ("app!=trainer", ["c", "d"]),  # objects without the label match inequality
        ("role in (launcher, worker)", ["a", "b"]),
        ("role notin (worker)", ["a", "c", "d"]),
        ("role", ["a", "b"]),
        ("!role", ["c", "d"]),
    ],
)
def test_label_selectors(core: client.CoreV1Api, selector: str, expected: list[str]) -> None:
    for name, labels in (
        ("a", {"app": "trainer", "role": "launcher"}),
        ("b", {"app": "trainer", "role": "worker"}),
        ("c", {"app": "other"}),
        ("d", {}),
    ):
        core.create_namespaced_config_map("default", configmap(name, labels))
    listed = core.list_namespaced_config_map("default", label_selector=selector)
    assert [c.metadata.name for c in listed.items] == expected


def test_field_selector_on_name_and_unsupported_label(core: client.CoreV1Api) -> None:
    core.create_namespaced_config_map("default", configmap("one"))
    core.create_namespaced_config_map("default", configmap("two"))
    listed = core.list_namespaced_config_map("default", field_selector="metadata.name=two")
    with pytest.raises(client.ApiException) as err:
        core.list_namespaced_config_map("default", field_selector="data.k=v")
    assert [c.metadata.name for c in listed.items] == ["two"]
    assert err.value.status == 400
    assert status_of(err.value)["message"] == "field label not supported: data.k"


# --- server-side apply --------------------------------------------------------------------------


def test_apply_creates_when_absent_and_records_the_manager(core: client.CoreV1Api) -> None:
    created = apply_configmap(core, configmap("ssa", k="v"), "ktrain")
    entries = [(m.manager, m.operation, m.fields_v1) for m in created.metadata.managed_fields]
    assert created.data == {"k": "v"}
    assert entries == [("ktrain", "Apply", {"f:data": {"f:k": {}}})]


def test_apply_conflicts_with_another_applier_unless_forced(core: client.CoreV1Api) -> None:
    apply_configmap(core, configmap("ssa", k="v", keep="x"), "ktrain")
    with pytest.raises(client.ApiException) as err:
        apply_configmap(core, configmap("ssa", k="changed"), "rival")
    forced = apply_configmap(core, configmap("ssa", k="changed"), "rival", force=True)

    body = status_of(err.value)
    assert err.value.status == 409 and body["reason"] == "Conflict"
    assert body["message"] == 'Apply failed with 1 conflict: conflict with "ktrain": .data.k'
    assert body["details"] == {
        "causes": [
            {
                "reason": "FieldManagerConflict",
                "message": 'conflict with "ktrain"',
                "field": ".data.k",
            }
        ]
    }
    owners = {m.manager: m.fields_v1 for m in forced.metadata.managed_fields}
    assert forced.data == {"k": "changed", "keep": "x"}
    assert owners == {"ktrain": {"f:data": {"f:keep": {}}}, "rival": {"f:data": {"f:k": {}}}}


def test_apply_conflict_with_update_manager_names_its_api_version(core: client.CoreV1Api) -> None:
    apply_configmap(core, configmap("ssa", a="1", b="2"), "ktrain")
    core.patch_namespaced_config_map(
        "ssa", "default", {"data": {"a": "edited", "b": "edited"}}, field_manager="kubectl-edit"
    )
    with pytest.raises(client.ApiException) as err:
        apply_configmap(core, configmap("ssa", a="1", b="2"), "ktrain")
    assert status_of(err.value)["message"] == (
        'Apply failed with 2 conflicts: conflicts with "kubectl-edit" using v1:\n- .data.a\n- .data.b'
    )


def test_equal_values_are_shared_without_conflict(core: client.CoreV1Api) -> None:
    apply_configmap(core, configmap("ssa", k="same"), "ktrain")
    shared = apply_configmap(core, configmap("ssa", k="same"), "rival")
    assert sorted(m.manager for m in shared.metadata.managed_fields) == ["ktrain", "rival"]


def test_apply_removes_fields_the_manager_stopped_applying(core: client.CoreV1Api) -> None:
    apply_configmap(core, configmap("ssa", {"team": "a"}, keep="1", drop="2"), "ktrain")
    core.patch_namespaced_config_map("ssa", "default", {"data": {"theirs": "3"}}, field_manager="other")
    result = apply_configmap(core, configmap("ssa", keep="1"), "ktrain")
    assert result.data == {"keep": "1", "theirs": "3"}
    assert not result.metadata.labels


def test_apply_without_field_manager_is_rejected(core: client.CoreV1Api) -> None:
    with pytest.raises(client.ApiException) as err:
        with_content_type(
            core.patch_namespaced_config_map,
            "ssa",
            "default",
            configmap("ssa"),
            content_type="application/apply-patch+yaml",
        )
    assert err.value.status == 422
    assert status_of(err.value)["message"] == (
        'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch'
    )


def test_apply_of_a_jobset_through_custom_objects(custom: client.CustomObjectsApi) -> None:
    body = jobset("applied")
    # The real server answers 201 when apply creates; CustomObjectsApi maps only 200 to a
    # body, so the created object is only visible through *_with_http_info or a later GET.
    _, first_code, _ = with_content_type(
        custom.patch_namespaced_custom_object_with_http_info,
        JS_GROUP,
        JS_VERSION,
        "default",
        "jobsets",
        "applied",
        body,
        field_manager="ktrain",
        content_type="application/apply-patch+yaml",
    )
    created = get_jobset(custom, "applied")
    body["spec"]["suspend"] = True
    second, second_code, _ = with_content_type(
        custom.patch_namespaced_custom_object_with_http_info,
        JS_GROUP,
        JS_VERSION,
        "default",
        "jobsets",
        "applied",
        body,
        field_manager="ktrain",
        content_type="application/apply-patch+yaml",
    )
    assert (first_code, second_code) == (201, 200)
    assert created["metadata"]["uid"] == second["metadata"]["uid"]
    assert second["spec"]["suspend"] is True
    assert second["metadata"]["generation"] == 2


# --- dry run ------------------------------------------------------------------------------------


def test_dry_run_create_patch_apply_and_delete_store_nothing(srv: ApiServerDouble, core: client.CoreV1Api) -> None:
    preview = core.create_namespaced_config_map("default", configmap("dry", k="v"), dry_run="All")
    assert preview.metadata.uid and srv.get_object("configmaps", "dry") is None
    applied = apply_configmap(core, configmap("dry2", k="v"), "ktrain", dry_run="All")
    assert applied.data == {"k": "v"} and srv.get_object("configmaps", "dry2") is None

    core.create_namespaced_config_map("default", configmap("real", k="v"))
    rv_before = srv.cluster.rv
    patched = core.patch_namespaced_config_map("real", "default", {"data": {"k": "new"}}, dry_run="All")
    core.delete_namespaced_config_map("real", "default", dry_run="All")
    stored = srv.get_object("configmaps", "real")

    assert patched.data == {"k": "new"}
    assert stored is not None and stored["data"] == {"k": "v"}
    assert srv.cluster.rv == rv_before


# --- garbage collection -------------------------------------------------------------------------


def _owned_chain(srv: ApiServerDouble, custom: client.CustomObjectsApi) -> JSON:
    """A JobSet owning a ConfigMap and a pod; the pod owns another ConfigMap."""
    owner = create_jobset(custom, jobset("owner"))
    srv.put_object(owned_configmap("child", owner))
    pod = srv.add_pod("owner-node-0", owner=owner)
    srv.put_object(owned_configmap("grandchild", pod))
    srv.put_object(configmap("unrelated"))
    return owner


@pytest.mark.parametrize("policy", ["Background", "Foreground"])
def test_deleting_an_owner_deletes_dependents_recursively(
    srv: ApiServerDouble, custom: client.CustomObjectsApi, policy: str
) -> None:
    _owned_chain(srv, custom)
    custom.delete_namespaced_custom_object(
        JS_GROUP, JS_VERSION, "default", "jobsets", "owner", propagation_policy=policy
    )
    assert [c["metadata"]["name"] for c in srv.objects("configmaps", "default")] == ["unrelated"]
    assert srv.objects("pods", "default") == []


def test_orphan_deletion_keeps_dependents_and_drops_their_owner_reference(
    srv: ApiServerDouble, custom: client.CustomObjectsApi
) -> None:
    _owned_chain(srv, custom)
    custom.delete_namespaced_custom_object(
        JS_GROUP,
        JS_VERSION,
        "default",
        "jobsets",
        "owner",
        body=client.V1DeleteOptions(propagation_policy="Orphan"),
    )
    child = srv.get_object("configmaps", "child")
    assert child is not None and "ownerReferences" not in child["metadata"]
    assert srv.get_object("pods", "owner-node-0") is not None
    assert srv.get_object("configmaps", "grandchild") is not None


# --- auth and fault injection --------------------------------------------------------------------


def test_requests_without_the_token_get_401(srv: ApiServerDouble) -> None:
    for api_client in (srv.api_client(anonymous=True), srv.api_client(token="wrong")):
        try:
            with pytest.raises(client.ApiException) as err:
                client.CoreV1Api(api_client).list_namespaced_config_map("default")
        finally:
            api_client.close()
        assert err.value.status == 401
        assert json.loads(err.value.body) == {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": "Unauthorized",
            "reason": "Unauthorized",
            "code": 401,
        }


def test_forbidden_injection_answers_403_like_rbac(
    srv: ApiServerDouble, core: client.CoreV1Api, custom: client.CustomObjectsApi
) -> None:
    fault = srv.forbid("create", "jobsets")
    with pytest.raises(client.ApiException) as err:
        create_jobset(custom, jobset("nope"))
    core.create_namespaced_config_map("default", configmap("allowed"))  # other resources unaffected
    listed = custom.list_namespaced_custom_object(JS_GROUP, JS_VERSION, "default", "jobsets")

    body = status_of(err.value)
    assert err.value.status == 403 and body["reason"] == "Forbidden"
    assert body["message"] == (
        'jobsets.jobset.x-k8s.io is forbidden: User "system:serviceaccount:default:ktrain" cannot '
        'create resource "jobsets" in API group "jobset.x-k8s.io" in the namespace "default"'
    )
    assert listed["items"] == [] and fault.hits == 1


def test_nth_create_fails_with_422_only_once(srv: ApiServerDouble, custom: client.CustomObjectsApi) -> None:
    srv.fail_nth_create("JobSet", 2, message="quota exceeded")
    create_jobset(custom, jobset("first"))
    with pytest.raises(client.ApiException) as err:
        create_jobset(custom, jobset("second"))
    create_jobset(custom, jobset("third"))
    body = status_of(err.value)
    assert err.value.status == 422 and body["reason"] == "Invalid"
    assert "quota exceeded" in body["message"]
    assert [j["metadata"]["name"] for j in srv.objects("jobsets")] == ["first", "third"]


def test_slow_server_delays_matching_requests(srv: ApiServerDouble, core: client.CoreV1Api) -> None:
    srv.slow(0.3, verb="list", resource="configmaps")
    started = time.monotonic()
    core.list_namespaced_config_map("default")
    slow = time.monotonic() - started
    started = time.monotonic()
    core.list_namespaced_secret("default")
    fast = time.monotonic() - started
    assert slow >= 0.3 and fast < 0.3


def test_stopped_server_refuses_connections_and_can_restart(srv: ApiServerDouble) -> None:
    api_client = srv.api_client()
    api_client.configuration.retries = 0
    core = client.CoreV1Api(api_client)
    try:
        core.create_namespaced_config_map("default", configmap("survives"))
        srv.stop()
        with pytest.raises(urllib3.exceptions.HTTPError):
            core.list_namespaced_config_map("default")
        srv.start()
        fresh = srv.api_client()
        listed = CoreV1Api(fresh).list_namespaced_config_map("default")
        names = [c.metadata.name for c in listed.items]
        fresh.close()
    finally:
        api_client.close()
    assert names == ["survives"]


def test_requests_are_recorded_with_verb_and_resource(srv: ApiServerDouble, core: client.CoreV1Api) -> None:
    apply_configmap(core, configmap("rec"), "ktrain")
    applies = srv.requests_for(verb="apply", resource="configmaps")
    assert len(applies) == 1
    assert applies[0].param("fieldManager") == "ktrain"
    assert applies[0].headers["Content-Type"] == "application/apply-patch+yaml"
    assert applies[0].json()["metadata"]["name"] == "rec"


def test_requests_are_recorded_with_their_target_as_sent_and_the_status_answered(
    srv: ApiServerDouble, core: client.CoreV1Api
) -> None:
    # benchmarks/run.py replays a command's requests from these (benchmarks/http_floor.py)
    core.create_namespaced_config_map("default", configmap("here"))
    srv.clear_requests()
    core.list_namespaced_config_map("default", limit=5, label_selector="a=b")
    with pytest.raises(client.ApiException):
        core.read_namespaced_config_map("gone", "default")
    core.delete_namespaced_config_map("here", "default")
    listed, missing, deleted = srv.requests
    assert listed.target == "/api/v1/namespaces/default/configmaps?labelSelector=a%3Db&limit=5"
    assert (listed.status, missing.status, deleted.status) == (200, 404, 200)
    assert missing.target == missing.path == "/api/v1/namespaces/default/configmaps/gone"


# --- schema validation (needs ../shared) -------------------------------------------------------


@pytest.mark.shared
def test_jobset_violating_the_crd_schema_is_422(srv: ApiServerDouble, custom: client.CustomObjectsApi) -> None:
    bad = jobset("bad", replicas="three")
    del bad["spec"]["replicatedJobs"][0]["template"]
    with pytest.raises(client.ApiException) as err:
        create_jobset(custom, bad)
    body = status_of(err.value)
    causes = {(c["reason"], c["field"]) for c in body["details"]["causes"]}
    assert err.value.status == 422 and body["reason"] == "Invalid"
    assert body["message"].startswith('JobSet.jobset.x-k8s.io "bad" is invalid: [')
    assert causes == {
        ("FieldValueRequired", "spec.replicatedJobs[0].template"),
        ("FieldValueTypeInvalid", "spec.replicatedJobs[0].replicas"),
    }
    assert srv.objects("jobsets") == []


@pytest.mark.shared
def test_unknown_fields_are_pruned_with_a_warning_or_rejected_when_strict(
    srv: ApiServerDouble, api: client.ApiClient, custom: client.CustomObjectsApi
) -> None:
    body = jobset("extra")
    body["spec"]["replicatedJob"] = []  # a typo the real server would silently drop
    created, _, headers = custom.create_namespaced_custom_object_with_http_info(
        JS_GROUP, JS_VERSION, "default", "jobsets", body
    )
    with pytest.raises(client.ApiException) as strict:
        create_jobset(custom, {**body, "metadata": {"name": "strict"}}, field_validation="Strict")
    assert "replicatedJob" not in created["spec"]
    assert headers["Warning"] == '299 - "unknown field \\"spec.replicatedJob\\""'
    assert strict.value.status == 400
    assert 'unknown field "spec.replicatedJob"' in status_of(strict.value)["message"]


@pytest.mark.shared
def test_podgroups_of_both_schedulers_are_validated(srv: ApiServerDouble, custom: client.CustomObjectsApi) -> None:
    for group, version in [
        ("scheduling.x-k8s.io", "v1alpha1"),
        ("scheduling.volcano.sh", "v1beta1"),
    ]:
        good = {
            "apiVersion": f"{group}/{version}",
            "kind": "PodGroup",
            "metadata": {"name": "pg"},
            "spec": {"minMember": 2},
        }
        bad = {**good, "metadata": {"name": "pg-bad"}, "spec": {"minMember": "two"}}
        custom.create_namespaced_custom_object(group, version, "default", "podgroups", good)
        with pytest.raises(client.ApiException) as err:
            custom.create_namespaced_custom_object(group, version, "default", "podgroups", bad)
        assert err.value.status == 422
        assert status_of(err.value)["details"]["causes"][0]["field"] == "spec.minMember"


# --- pods, logs, events, status -------------------------------------------------------------------


def test_log_follow_streams_lines_appended_after_the_request(srv: ApiServerDouble, core: client.CoreV1Api) -> None:
    srv.add_pod("trainer-node-0", containers=["node"])
    srv.append_log("trainer-node-0", "epoch 1\n")
    response = core.read_namespaced_pod_log(
        "trainer-node-0", "default", follow=True, _preload_content=False
    )  # returns once headers arrive: the stream is open before the next lines exist

    def trainer() -> None:
        srv.append_log("trainer-node-0", "epoch 2\n")
        time.sleep(0.05)
        srv.terminate_container("trainer-node-0")

    worker = threading.Thread(target=trainer)
    worker.start()
    lines = list(watch.watch.iter_resp_lines(response))
    worker.join()
    response.release_conn()
    assert lines == ["epoch 1", "epoch 2"]
    assert core.read_namespaced_pod("trainer-node-0", "default").status.phase == "Succeeded"


def test_log_options_tail_timestamps_previous_and_container(srv: ApiServerDouble, core: client.CoreV1Api) -> None:
    srv.add_pod("p", containers=["main", "sidecar"])
    srv.append_log("p", "a\nb\nc\n", container="main")
    srv.append_log("p", "crashed\n", container="main", previous=True)

    tail = core.read_namespaced_pod_log("p", "default", container="main", tail_lines=2)
    stamped = core.read_namespaced_pod_log("p", "default", container="main", tail_lines=1, timestamps=True)
    previous = core.read_namespaced_pod_log("p", "default", container="main", previous=True)
    with pytest.raises(client.ApiException) as unnamed:
        core.read_namespaced_pod_log("p", "default")
    with pytest.raises(client.ApiException) as no_previous:
        core.read_namespaced_pod_log("p", "default", container="sidecar", previous=True)

    assert tail == "b\nc\n"
    timestamp, _, text = stamped.partition(" ")
    assert text == "c\n" and timestamp.endswith("Z") and "T" in timestamp
    assert previous == "crashed\n"
    assert status_of(unnamed.value)["message"] == (
        "a container name must be specified for pod p, choose one of: [main sidecar]"
    )
    assert no_previous.value.status == 400


def test_logs_of_a_waiting_container_are_a_400(srv: ApiServerDouble, core: client.CoreV1Api) -> None:
    srv.add_pod("pending", phase="Pending")
    with pytest.raises(client.ApiException) as err:
        core.read_namespaced_pod_log("pending", "default")
    assert status_of(err.value)["message"] == (
        'container "main" in pod "pending" is waiting to start: ContainerCreating'
    )


def test_pods_list_by_label_and_events_by_involved_object(srv: ApiServerDouble, core: client.CoreV1Api) -> None:
    pod = srv.add_pod("w-0", labels={"jobset.sigs.k8s.io/jobset-name": "train"}, node="node-a")
    srv.add_pod("x-0", labels={"jobset.sigs.k8s.io/jobset-name": "other"})
    srv.add_event(pod, "Scheduled", "Successfully assigned default/w-0 to node-a")
    srv.add_event(("JobSet", "train"), "Created", "created job")

    pods = core.list_namespaced_pod("default", label_selector="jobset.sigs.k8s.io/jobset-name=train")
    events = core.list_namespaced_event("default", field_selector="involvedObject.name=w-0")
    assert [p.metadata.name for p in pods.items] == ["w-0"]
    assert pods.items[0].spec.node_name == "node-a"
    assert pods.items[0].status.container_statuses[0].state.running is not None
    assert [(e.reason, e.involved_object.kind) for e in events.items] == [("Scheduled", "Pod")]


def test_status_set_by_the_test_survives_main_resource_writes(
    srv: ApiServerDouble, custom: client.CustomObjectsApi
) -> None:
    create_jobset(custom, jobset("st"))
    completed = {
        "type": "Completed",
        "status": "True",
        "reason": "AllJobsCompleted",
        "message": "jobset completed successfully",
        "lastTransitionTime": "2025-01-01T00:00:00Z",
    }
    srv.set_status("jobsets", "st", {"conditions": [completed], "terminalState": "Completed"})
    patched = custom.patch_namespaced_custom_object(
        JS_GROUP, JS_VERSION, "default", "jobsets", "st", {"status": {"conditions": []}}
    )
    fetched = get_jobset(custom, "st")
    assert patched["status"]["conditions"] == [completed]
    assert fetched["status"]["terminalState"] == "Completed"


# --- watch ----------------------------------------------------------------------------------------


def test_watch_streams_added_modified_deleted_from_a_resource_version(
    core: client.CoreV1Api,
) -> None:
    start = core.list_namespaced_config_map("default").metadata.resource_version
    core.create_namespaced_config_map("default", configmap("w", k="1"))
    core.patch_namespaced_config_map("w", "default", {"data": {"k": "2"}})
    core.delete_namespaced_config_map("w", "default")
    stream = watch.Watch()
    events = []
    for event in stream.stream(core.list_namespaced_config_map, "default", resource_version=start, timeout_seconds=2):
        events.append((event["type"], event["object"].metadata.name))
        if len(events) == 3:
            stream.stop()
    assert events == [("ADDED", "w"), ("MODIFIED", "w"), ("DELETED", "w")]


def test_watch_from_a_compacted_resource_version_is_410(srv: ApiServerDouble, core: client.CoreV1Api) -> None:
    start = core.list_namespaced_config_map("default").metadata.resource_version
    core.create_namespaced_config_map("default", configmap("w"))
    srv.compact()
    with pytest.raises(client.ApiException) as err:
        for _ in watch.Watch().stream(
            core.list_namespaced_config_map, "default", resource_version=start, timeout_seconds=1
        ):
            pass
    assert err.value.status == 410


# --- lifecycle ------------------------------------------------------------------------------------


def test_stop_ends_open_streams_and_leaves_no_threads() -> None:
    with ApiServerDouble() as double:
        double.add_pod("p")
        api_client = double.api_client()
        core = client.CoreV1Api(api_client)
        response = core.read_namespaced_pod_log("p", "default", follow=True, _preload_content=False)
        core.list_namespaced_config_map("default")  # leaves an idle keep-alive connection
    response.release_conn()
    api_client.close()
    assert [t.name for t in threading.enumerate() if t.name.startswith(THREAD_PREFIX)] == []
