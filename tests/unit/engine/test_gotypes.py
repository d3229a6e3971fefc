"""Go's zero values (ktrain/engine/gotypes.py): what the typed round trip drops and keeps, as Go's
json.Marshal of the API types does (ENGINE.md §4.2)."""

from __future__ import annotations

from ktrain.engine.gotypes import drop_zero_values

from .audit import _container, _spec


def test_zero_values_of_pointer_fields_are_kept() -> None:
    patch = {
        "replicatedJobs": [
            {
                "name": "node",
                "template": {
                    "spec": {
                        "template": {
                            "spec": {
                                "serviceAccountName": "",
                                "securityContext": {"runAsUser": 0, "runAsNonRoot": False},
                            }
                        }
                    }
                },
            }
        ]
    }
    sent = drop_zero_values(patch, "JobSetSpecPatch")
    pod = sent["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    assert pod == {"serviceAccountName": "", "securityContext": {"runAsUser": 0, "runAsNonRoot": False}}


def test_typed_jobset_spec_drops_zero_omitempty_fields_but_not_map_values() -> None:
    spec = _spec(
        {
            "name": "n",
            "image": "i",
            "stdin": False,
            "ports": [{"containerPort": 80, "hostPort": 0}],
            "volumeMounts": [{"name": "v", "mountPath": "/v", "readOnly": False}],
            "resources": {"limits": {"cpu": 0}},
        }
    )
    spec["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["nodeSelector"] = {"zone": ""}
    typed = drop_zero_values(spec, "JobSetSpec")
    assert _container(typed) == {
        "name": "n",
        "image": "i",
        "ports": [{"containerPort": 80}],
        "volumeMounts": [{"name": "v", "mountPath": "/v"}],
        "resources": {"limits": {"cpu": 0}},
    }
    assert typed["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["nodeSelector"] == {"zone": ""}


def test_typed_round_trip_writes_every_divisor() -> None:
    """`resource.Quantity` is a non-pointer struct: Go never omits it, so an unset divisor comes
    back as "0" and a set one in canonical form (ToUnstructured / json.Marshal of core/v1 types)."""
    spec = _spec(
        {
            "name": "node",
            "env": [
                {"name": "A", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu"}}},
                {"name": "B", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu", "divisor": "1000m"}}},
                {"name": "C", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu", "divisor": 2}}},
                {"name": "D", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
            ],
        }
    )
    pod = spec["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    pod["volumes"] = [
        {"name": "d", "downwardAPI": {"items": [{"path": "p", "resourceFieldRef": {"resource": "limits.memory"}}]}},
        {
            "name": "p",
            "projected": {
                "sources": [{"downwardAPI": {"items": [{"path": "q", "resourceFieldRef": {"resource": "limits.cpu"}}]}}]
            },
        },
    ]
    typed = drop_zero_values(spec, "JobSetSpec")
    refs = [e["valueFrom"].get("resourceFieldRef") for e in _container(typed)["env"]]
    assert [r and r["divisor"] for r in refs] == ["0", "1", "2", None]
    volumes = typed["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["volumes"]
    assert volumes[0]["downwardAPI"]["items"][0]["resourceFieldRef"]["divisor"] == "0"
    assert volumes[1]["projected"]["sources"][0]["downwardAPI"]["items"][0]["resourceFieldRef"]["divisor"] == "0"
    assert (
        "divisor"
        not in spec["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]["env"][0][
            "valueFrom"
        ]["resourceFieldRef"]
    )  # the input is not changed


def test_unparsable_divisor_is_left_for_validation() -> None:
    typed = drop_zero_values({"resource": "limits.cpu", "divisor": "1x"}, "ResourceFieldSelector")
    assert typed == {"resource": "limits.cpu", "divisor": "1x"}
