"""The Kubeflow SDK's training options in ktrain (ktrain/python_api/options.py, `ktrain.options`): the
same classes and fields, and the same checks, with the SDK's messages (differential against
`kubeflow.trainer.options`, SDK 0.5)."""

from __future__ import annotations

from typing import Any

import pytest
from kubeflow.trainer import options as sdk_options

import ktrain
import ktrain.options as opt
from ktrain.errors import UsageError
from ktrain.python_api import options
from ktrain.python_api.options import check_container_patch


def test_ktrain_offers_every_option_class_of_the_sdk() -> None:
    assert set(opt.__all__) == set(sdk_options.__all__)
    for name in opt.__all__:  # the same fields, in the same order, with the same defaults
        import dataclasses

        ours, theirs = dataclasses.fields(getattr(opt, name)), dataclasses.fields(getattr(sdk_options, name))
        assert [(f.name, f.default, f.init) for f in ours] == [(f.name, f.default, f.init) for f in theirs], name
    assert ktrain.options is opt  # `import ktrain; ktrain.options.Labels`, as `kubeflow.trainer.options.Labels`


@pytest.mark.parametrize(
    "build",
    [
        lambda m: m.ActiveDeadlineSeconds(0),
        lambda m: m.ActiveDeadlineSeconds(True),
        lambda m: m.ActiveDeadlineSeconds(-5),
        lambda m: m.ContainerPatch(name=""),
        lambda m: m.ContainerPatch(name="node", env=[{"invalid": "structure"}]),
        lambda m: m.ContainerPatch(name="node", env=[{"name": "A"}]),
        lambda m: m.ContainerPatch(name="node", env=[{"name": "A", "valueFrom": {"nope": {}}}]),
        lambda m: m.ContainerPatch(name="node", volume_mounts=[{"name": "vol"}]),
        lambda m: m.ContainerPatch(name="node", volume_mounts=[{"name": "vol", "mountPath": "relative"}]),
    ],
)
def test_option_values_the_sdk_refuses_ktrain_refuses_alike(build: Any) -> None:
    with pytest.raises(ValueError) as theirs:
        build(sdk_options)
    with pytest.raises(UsageError) as ours:
        build(opt)
    assert _unordered(ours.value.message) == _unordered(str(theirs.value))


def _unordered(message: str) -> tuple[str, set[str]]:
    """The SDK lists the valueFrom keys from a set, in an order that changes per process."""
    head, _, names = message.partition("one of: ")
    return head, set(names.split(", "))


def test_ktrain_options_gives_every_option_of_the_module() -> None:
    assert opt.__all__ == options.__all__
    assert all(getattr(opt, name) is getattr(options, name) for name in options.__all__)


BAD_CONTAINER_PATCHES = [
    {"name": " "},
    {"name": "node", "env": {"A": "1"}},
    {"name": "node", "env": ["A=1"]},
    {"name": "node", "env": [{"name": "", "value": "1"}]},
    {"name": "node", "env": [{"name": "A", "valueFrom": "x"}]},
    {"name": "node", "volume_mounts": {"name": "v"}},
    {"name": "node", "volume_mounts": ["v"]},
    {"name": "node", "volume_mounts": [{"mountPath": "/d"}]},
    {"name": "node", "volume_mounts": [{"name": "v", "mountPath": ""}]},
]


@pytest.mark.parametrize("fields", BAD_CONTAINER_PATCHES, ids=[str(f) for f in BAD_CONTAINER_PATCHES])
def test_the_container_patch_check_refuses_what_the_sdk_refuses_in_its_words(fields: dict[str, Any]) -> None:
    """What conversion runs on a ContainerPatch of either SDK, read field by field."""
    with pytest.raises(ValueError) as theirs:
        sdk_options.ContainerPatch(**fields)
    with pytest.raises(UsageError) as ours:
        check_container_patch(fields["name"], fields.get("env"), fields.get("volume_mounts"))
    assert ours.value.message == str(theirs.value)
    check_container_patch("node", [{"name": "A", "value": "1"}], [{"name": "v", "mountPath": "/d"}])  # accepted
