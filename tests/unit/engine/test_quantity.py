"""Kubernetes quantities: parse, add, multiply and print as apimachinery does."""

from __future__ import annotations

import pytest

from ktrain.engine.quantity import Quantity, QuantityError, pod_requests


@pytest.mark.parametrize(
    ("text", "canonical"),
    [("0.7", "700m"), ("500m", "500m"), ("2.5", "2500m"), ("1.5Gi", "1536Mi"), ("1024Mi", "1Gi"),
     ("1e3", "1e3"), ("0.0001", "100u"), ("1000", "1k"), ("12", "12"), ("0.0000000001", "1n"), ("100Mi", "100Mi"),
     ("512", "512"), ("0", "0")],
)
def test_canonical_form_matches_apimachinery(text: str, canonical: str) -> None:
    assert Quantity.parse(text).canonical() == canonical


@pytest.mark.parametrize("bad", ["", "abc", "1.2.3", "5Zi", " 1", "1 "])
def test_invalid_quantities_are_rejected(bad: str) -> None:
    with pytest.raises(QuantityError):
        Quantity.parse(bad)


def test_sums_and_products_keep_the_first_operands_format() -> None:
    assert (Quantity.parse("500m") * 3).canonical() == "1500m"
    assert (Quantity.parse("1.5Gi") * 2).canonical() == "3Gi"
    assert (Quantity.parse("2Gi") * 4).canonical() == "8Gi"
    assert (Quantity.parse("512Mi") + Quantity.parse("2Gi")).canonical() == "2560Mi"
    assert (Quantity.parse("0") + Quantity.parse("1Gi")).canonical() == "1Gi"  # zero takes the other format


def test_ceil_int_rounds_up() -> None:
    assert Quantity.parse("2500m").ceil_int() == 3
    assert Quantity.parse("0.7").ceil_int() == 1
    assert Quantity.parse(4).ceil_int() == 4


def test_pod_requests_follow_the_kubernetes_init_container_rule() -> None:
    spec = {
        "containers": [{"resources": {"requests": {"cpu": "2", "memory": "8Gi"}, "limits": {"cpu": "9"}}}],
        "initContainers": [
            {"restartPolicy": "Always", "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}},
            {"resources": {"requests": {"cpu": "4", "memory": "1Gi"}}},
        ],
        "overhead": {"cpu": "10m"},
    }
    reqs = pod_requests(spec)
    # containers + sidecar = 2100m / 8320Mi; init needs 4 + 100m = 4100m / 1152Mi; max, then overhead
    assert reqs["cpu"].canonical() == "4110m"
    assert reqs["memory"].canonical() == "8320Mi"
