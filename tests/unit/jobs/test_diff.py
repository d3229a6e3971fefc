"""`ktrain.jobs.diff`: `job diff`'s normalisation: what the server manages left out, Secret values
masked as `kubectl diff` masks them (k8s.io/kubectl/pkg/cmd/diff/diff.go, Masker), dependents owned
as `job create` stores them."""

from __future__ import annotations

from ktrain.jobs.diff import LAST_APPLIED, MASK, MASK_AFTER, MASK_BEFORE, mask_secrets, stripped, with_owner

LIVE = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {
        "name": "demo-hostfile",
        "namespace": "ns",
        "uid": "u-1",
        "resourceVersion": "42",
        "creationTimestamp": "2026-01-01T00:00:00Z",
        "generation": 3,
        "managedFields": [{"manager": "ktrain"}],
        "labels": {"app": "demo"},
        "annotations": {LAST_APPLIED: "{...}"},
    },
    "data": {"hostfile": "a slots=1\n"},
    "status": {"x": 1},
}


def test_stripped_leaves_out_what_the_server_manages_and_keeps_the_rest() -> None:
    out = stripped(LIVE)
    assert out == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "demo-hostfile", "namespace": "ns", "labels": {"app": "demo"}},
        "data": {"hostfile": "a slots=1\n"},
    }
    assert LIVE["metadata"]["uid"] == "u-1" and "status" in LIVE  # a copy: the input is untouched


def test_other_annotations_stay_when_last_applied_goes() -> None:
    obj = {"metadata": {"annotations": {LAST_APPLIED: "{}", "team": "nlp"}}}
    assert stripped(obj) == {"metadata": {"annotations": {"team": "nlp"}}}


def test_secret_values_are_masked_as_kubectl_diff_masks_them() -> None:
    live = {"kind": "Secret", "data": {"same": "YQ==", "changed": "Yg==", "gone": "Yw=="}}
    merged = {"kind": "Secret", "data": {"same": "YQ==", "changed": "ZA==", "new": "ZQ=="}}
    before, after = mask_secrets(live, merged)
    assert before == {"kind": "Secret", "data": {"same": MASK, "changed": MASK_BEFORE, "gone": MASK}}
    assert after == {"kind": "Secret", "data": {"same": MASK, "changed": MASK_AFTER, "new": MASK}}
    assert live["data"]["changed"] == "Yg=="  # the inputs keep their values
    only, none = mask_secrets(live, None)
    assert none is None and only is not None and set(only["data"].values()) == {MASK}


def test_a_dependent_is_owned_by_the_stored_job_and_the_owner_is_left_alone() -> None:
    owner = {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": {"name": "demo", "uid": "u-9"}}
    owned = with_owner({"kind": "ConfigMap", "metadata": {"name": "demo-hostfile"}}, owner)
    assert owned["metadata"]["ownerReferences"] == [
        {
            "apiVersion": "jobset.x-k8s.io/v1alpha2",
            "kind": "JobSet",
            "name": "demo",
            "uid": "u-9",
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
    assert with_owner(owner, owner) is owner
    unstored = {"kind": "JobSet", "metadata": {"name": "demo"}}  # not on the cluster: no uid to point at
    dependent = {"kind": "ConfigMap", "metadata": {"name": "x"}}
    assert with_owner(dependent, unstored) is dependent and with_owner(dependent, None) is dependent
