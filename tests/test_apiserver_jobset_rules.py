"""The API-server double's JobSet CRD rules (`self == oldSelf`, tests/apiserver/jobset_admission.py):
the same answers with or without ../shared, and the same rules as the upstream CRD when it is there.

ktrain relies on them: `job create` must resume a JobSet by patching spec.suspend alone, because a
re-apply that drops a server-defaulted field in an immutable value is refused (issue #19)."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from apiserver import ApiServerDouble
from apiserver.jobset_admission import CEL_IMMUTABLE, IMMUTABLE_SPEC_FIELDS
from conftest import UPSTREAM
from kubernetes import client

JS_GROUP, JS_VERSION = "jobset.x-k8s.io", "v1alpha2"
JSON = dict[str, Any]


@pytest.fixture
def custom() -> Iterator[client.CustomObjectsApi]:
    with ApiServerDouble(crds={"jobset"}) as srv:
        api = srv.api_client()
        yield client.CustomObjectsApi(api)
        api.close()


def _jobset(name: str, **spec: Any) -> JSON:
    pod = {"spec": {"containers": [{"name": "c", "image": "busybox"}]}}
    return {
        "apiVersion": f"{JS_GROUP}/{JS_VERSION}",
        "kind": "JobSet",
        "metadata": {"name": name},
        "spec": {
            "suspend": True,
            "replicatedJobs": [
                {"name": "prep", "template": {"spec": {"template": pod}}},
                {
                    "name": "node",
                    "dependsOn": [{"name": "prep", "status": "Complete"}],
                    "template": {"spec": {"template": pod}},
                },
            ],
            **spec,
        },
    }


def _create(custom: client.CustomObjectsApi, body: JSON) -> JSON:
    created: JSON = custom.create_namespaced_custom_object(JS_GROUP, JS_VERSION, "default", "jobsets", body)
    return created


def _patch(custom: client.CustomObjectsApi, name: str, patch: JSON) -> JSON:
    patched: JSON = custom.patch_namespaced_custom_object(JS_GROUP, JS_VERSION, "default", "jobsets", name, patch)
    return patched


def _refused(custom: client.CustomObjectsApi, name: str, patch: JSON) -> JSON:
    with pytest.raises(client.ApiException) as err:
        _patch(custom, name, patch)
    assert err.value.status == 422, err.value.body
    body: JSON = json.loads(err.value.body)
    return body


VCP = [{"templates": [{"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"]}}]}]


@pytest.mark.parametrize(
    ("field", "created", "changed"),
    [
        ("network", None, {"enableDNSHostnames": False}),  # created from the webhook's defaults
        ("successPolicy", None, {"operator": "Any"}),
        ("startupPolicy", None, {"startupPolicyOrder": "InOrder"}),
        ("failurePolicy", {"maxRestarts": 1}, {"maxRestarts": 2}),
        ("volumeClaimPolicies", VCP, [*VCP, *VCP]),
    ],
)
def test_changing_an_immutable_spec_field_is_refused_422(
    custom: client.CustomObjectsApi, field: str, created: Any, changed: Any
) -> None:
    spec = {} if created is None else {field: created}
    before = _create(custom, _jobset("js", **spec))
    body = _refused(custom, "js", {"spec": {field: changed}})
    assert body["reason"] == "Invalid"
    assert body["message"] == f'JobSet.jobset.x-k8s.io "js" is invalid: spec.{field}: Invalid value: Value is immutable'
    assert body["details"]["causes"] == [
        {"reason": "FieldValueInvalid", "message": "Invalid value: Value is immutable", "field": f"spec.{field}"}
    ]
    after = custom.get_namespaced_custom_object(JS_GROUP, JS_VERSION, "default", "jobsets", "js")
    assert after["spec"] == before["spec"]


def test_a_patch_of_suspend_alone_passes_every_rule(custom: client.CustomObjectsApi) -> None:
    """How `job create` resumes a JobSet (issue #19): the defaulted values stay as they were."""
    before = _create(custom, _jobset("js", volumeClaimPolicies=VCP, failurePolicy={"maxRestarts": 1}))
    after = _patch(custom, "js", {"spec": {"suspend": False}})
    assert after["spec"] == {**before["spec"], "suspend": False}


def test_a_rule_is_checked_only_where_the_old_and_the_new_object_both_have_the_field(
    custom: client.CustomObjectsApi,
) -> None:
    """A transition rule needs oldSelf: adding or removing the value is no transition (failurePolicy
    is the one such field the webhook does not default on create)."""
    _create(custom, _jobset("js"))
    added = _patch(custom, "js", {"spec": {"failurePolicy": {"maxRestarts": 3}}})
    removed = _patch(custom, "js", {"spec": {"failurePolicy": None}})
    assert added["spec"]["failurePolicy"]["maxRestarts"] == 3  # (with the CRD's defaults when ../shared is there)
    assert "failurePolicy" not in removed["spec"]


def test_depends_on_is_compared_with_the_old_replicated_job_of_the_same_name(custom: client.CustomObjectsApi) -> None:
    created = _create(custom, _jobset("js"))
    jobs = copy.deepcopy(created["spec"]["replicatedJobs"])
    jobs[1]["dependsOn"] = [{"name": "prep", "status": "Ready"}]
    body = _refused(custom, "js", {"spec": {"replicatedJobs": jobs}})
    assert [c["field"] for c in body["details"]["causes"]] == ["spec.replicatedJobs[1].dependsOn"]
    # a replicated job of a new name has no old value to compare with: no transition rule applies
    # (the validating webhook refuses the change of spec.replicatedJobs instead, with a 403)
    jobs = copy.deepcopy(created["spec"]["replicatedJobs"])
    jobs[1]["name"], jobs[1]["dependsOn"] = "other", [{"name": "prep", "status": "Ready"}]
    with pytest.raises(client.ApiException) as err:
        _patch(custom, "js", {"spec": {"replicatedJobs": jobs}})
    assert err.value.status == 403
    assert "spec.replicatedJobs: Invalid value" in json.loads(err.value.body)["message"]


def test_several_changed_fields_are_each_reported(custom: client.CustomObjectsApi) -> None:
    _create(custom, _jobset("js"))
    body = _refused(custom, "js", {"spec": {"network": {"subdomain": "x"}, "successPolicy": {"operator": "Any"}}})
    assert sorted(c["field"] for c in body["details"]["causes"]) == ["spec.network", "spec.successPolicy"]


# --- against the upstream CRD ---------------------------------------------------------------------


def _crd_transition_rules(schema: JSON, path: tuple[str, ...] = ()) -> set[tuple[tuple[str, ...], str]]:
    """(path under spec, message) of every `self == oldSelf` rule in a CRD schema, with a `[key]`
    step for the items of a list-map, as IMMUTABLE_SPEC_FIELDS writes them."""
    found = {
        (path, rule.get("message", ""))
        for rule in schema.get("x-kubernetes-validations") or []
        if rule["rule"].replace(" ", "") == "self==oldSelf"
    }
    for name, sub in (schema.get("properties") or {}).items():
        found |= _crd_transition_rules(sub, (*path, name))
    items = schema.get("items")
    if isinstance(items, dict):
        # items of atomic and set lists do not correlate with old items: a rule there never runs
        if schema.get("x-kubernetes-list-type") == "map":
            keys = ",".join(schema["x-kubernetes-list-map-keys"])
            found |= _crd_transition_rules(items, (*path, f"[{keys}]"))
        else:
            assert not _crd_transition_rules(items), f"a transition rule under the unkeyed list {path}"
    return found


@pytest.mark.shared
def test_the_double_has_every_transition_rule_of_the_jobset_crd_and_no_other() -> None:
    crd = yaml.safe_load((UPSTREAM / "jobset" / "jobset.x-k8s.io_jobsets.yaml").read_text())
    (version,) = [v for v in crd["spec"]["versions"] if v["name"] == JS_VERSION]
    spec = version["schema"]["openAPIV3Schema"]["properties"]["spec"]
    assert _crd_transition_rules(spec) == {(steps, CEL_IMMUTABLE) for steps in IMMUTABLE_SPEC_FIELDS}


def test_the_validating_webhook_refuses_a_bad_failure_policy_on_create_403(custom: client.CustomObjectsApi) -> None:
    """jobset_webhook.go validateFailurePolicy: unique rule names, known targets and Job failure reasons."""
    rules = [
        {"name": "same", "action": "RestartJobSet", "onJobFailureReasons": ["PodFailurePolicy"]},
        {"name": "same", "action": "FailJobSet", "targetReplicatedJobs": ["nope"], "onJobFailureReasons": ["Evicted"]},
    ]
    with pytest.raises(client.ApiException) as err:
        _create(custom, _jobset("bad", failurePolicy={"maxRestarts": 1, "rules": rules}))
    assert err.value.status == 403
    message = json.loads(err.value.body)["message"]
    assert message.startswith('admission webhook "vjobset.kb.io" denied the request: ')
    assert "invalid replicatedJob name 'nope' in failure policy does not appear in .spec.ReplicatedJobs" in message
    assert "invalid job failure reason 'Evicted' in failure policy is not a recognized job failure reason" in message
    assert "rule names are not unique, rules with indices [0 1] all have the same name 'same'" in message
    with pytest.raises(client.ApiException):
        custom.get_namespaced_custom_object(JS_GROUP, JS_VERSION, "default", "jobsets", "bad")
    good = [{"name": "RestartOnPreemption", "action": "RestartJobSetAndIgnoreMaxRestarts"}]
    assert (
        _create(custom, _jobset("good", failurePolicy={"maxRestarts": 1, "rules": good}))["metadata"]["name"] == "good"
    )
