"""The shared pydantic base (`KubeModel`) and the small Kubernetes types: camelCase on the wire,
strict types as the API server checks them, unknown fields rejected, frozen; metadata open."""

from __future__ import annotations

import pydantic
import pytest

from ktrain.api.common import EnvVar, KubeModel, LocalObjectReference, ObjectMeta, ResourceRequirements


def test_fields_are_camel_case_on_the_wire_and_snake_case_in_python() -> None:
    env = EnvVar.model_validate({"name": "X", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}})
    assert env.value_from == {"secretKeyRef": {"name": "s", "key": "k"}}
    assert env.to_dict() == {"name": "X", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}
    # populate_by_name: the Python name is accepted too
    assert EnvVar(name="X", value_from={"a": 1}).to_dict() == {"name": "X", "valueFrom": {"a": 1}}


def test_to_dict_drops_nulls_and_fills_defaults() -> None:
    assert EnvVar(name="X").to_dict() == {"name": "X"}
    assert LocalObjectReference().to_dict() == {"name": ""}
    assert ResourceRequirements().to_dict() == {}


def test_types_are_strict_as_the_api_server() -> None:
    with pytest.raises(pydantic.ValidationError):
        EnvVar.model_validate({"name": "X", "value": 4})  # no coercion of 4 to "4"
    with pytest.raises(pydantic.ValidationError):
        EnvVar.model_validate({"name": 1})


def test_unknown_fields_are_rejected() -> None:
    with pytest.raises(pydantic.ValidationError) as err:
        EnvVar.model_validate({"name": "X", "valu": "1"})
    assert "valu" in str(err.value)


def test_quantities_may_be_numbers_or_strings() -> None:
    res = ResourceRequirements.model_validate({"limits": {"nvidia.com/gpu": 4, "cpu": "500m", "memory": 1.5}})
    assert res.to_dict() == {"limits": {"nvidia.com/gpu": 4, "cpu": "500m", "memory": 1.5}}
    with pytest.raises(pydantic.ValidationError):
        ResourceRequirements.model_validate({"limits": {"cpu": ["1"]}})


def test_models_are_frozen() -> None:
    env = EnvVar(name="X")
    with pytest.raises(pydantic.ValidationError):
        env.name = "Y"  # type: ignore[misc]


def test_metadata_keeps_fields_ktrain_does_not_type() -> None:
    """`kubectl get -o yaml` output (resourceVersion, managedFields ...) can be fed back."""
    wire = {"name": "j", "generateName": "j-", "resourceVersion": "12", "managedFields": [{"manager": "kubectl"}]}
    meta = ObjectMeta.model_validate(wire)
    assert meta.name == "j" and meta.generate_name == "j-"
    dumped = meta.model_dump(by_alias=True, exclude_none=True)
    assert dumped == wire


def test_a_kube_model_subclass_gets_the_base_config() -> None:
    class Thing(KubeModel):
        max_restarts: int = 0

    assert Thing.model_validate({"maxRestarts": 3}).to_dict() == {"maxRestarts": 3}
    with pytest.raises(pydantic.ValidationError):
        Thing.model_validate({"maxRestarts": "3"})
    with pytest.raises(pydantic.ValidationError):
        Thing.model_validate({"max_restarts": 1, "other": 2})
