"""ktrain/convert/common.py: the type and unknown-field checks at file:line:col, and the image pull
policy Kubernetes defaults."""

from __future__ import annotations

import re

import pytest
from v1convert import FULL_RUN_POLICY, TF_FULL, one, pytorch, rows

from ktrain.convert.common import default_pull_policy
from ktrain.convert.report import KEPT
from ktrain.errors import InputError


def test_wrong_type_points_at_the_field() -> None:
    text = TF_FULL.replace("replicas: 2\n", "replicas: two\n")
    with pytest.raises(InputError, match=r"spec.tfReplicaSpecs.PS.replicas must be an integer, got str 'two'") as exc:
        one(text, file="tf.yaml")
    assert (exc.value.file, exc.value.line, exc.value.column) == ("tf.yaml", 13, 17)


def test_unknown_field_suggests_the_right_one() -> None:
    with pytest.raises(InputError, match=re.escape('unknown field "spec.runPolicy.backofLimit"')) as exc:
        one(FULL_RUN_POLICY.replace("backoffLimit", "backofLimit"))
    assert exc.value.hint == "did you mean 'backoffLimit'?" and exc.value.line == 9


@pytest.mark.parametrize(
    ("image", "policy"),
    [
        ("torch:latest", "Always"),
        ("torch", "Always"),
        ("registry:5000/team/torch", "Always"),
        ("torch:2.1", "IfNotPresent"),
        ("registry:5000/team/torch:2.1", "IfNotPresent"),
        ("torch@sha256:" + "a" * 64, "IfNotPresent"),
        ("torch:latest@sha256:" + "a" * 64, "Always"),
    ],
)
def test_default_pull_policy_is_kubernetes_defaulting(image: str, policy: str) -> None:
    """k8s pkg/apis/core/v1/defaults.go SetDefaults_Container: Always when the tag is latest or
    absent without a digest (pkg/util/parsers ParseImageName), else IfNotPresent."""
    assert default_pull_policy(image) == policy


def test_if_not_present_on_latest_is_kept() -> None:
    """The issue's case: IfNotPresent on `:latest` (a preloaded image) differs from the default
    (Always), so a runtime that keeps it is generated; on a tagged image it is the default."""
    cont = {"name": "pytorch", "image": "torch:latest", "imagePullPolicy": "IfNotPresent", "command": ["x"]}
    conv = one(pytorch(container=cont))
    assert conv.runtime is not None and "imagePullPolicy IfNotPresent needs a runtime" in conv.reason
    pod = conv.runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    assert pod["containers"][0]["imagePullPolicy"] == "IfNotPresent"
    conv = one(pytorch(container={**cont, "image": "torch:2"}))
    assert conv.runtime is None
    conv = one(pytorch(container={**cont, "imagePullPolicy": "Always"}))  # Always on :latest: the default
    assert conv.runtime is None and rows(conv)[
        "spec.pytorchReplicaSpecs.Worker.template.spec.containers[0].imagePullPolicy"
    ][0] == (KEPT)
