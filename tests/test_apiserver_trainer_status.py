"""The double serves TrainJob `status.trainerStatus` as the real server does: only through the status
subresource, checked against the CRD's schema and its CEL rule (README rule S6)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from apiserver import ApiServerDouble
from kubernetes import client
from kubernetes.client import CustomObjectsApi

G, V, NS = "trainer.kubeflow.org", "v1alpha1", "team-a"
GOOD = {
    "progressPercentage": 45,
    "estimatedRemainingSeconds": 3600,
    "metrics": [{"name": "loss", "value": "0.2347"}],
    "lastUpdatedTime": "2026-06-12T03:00:00Z",
}


@pytest.fixture
def custom() -> Iterator[CustomObjectsApi]:
    with ApiServerDouble(token="t") as srv:
        srv.add_namespace(NS)
        api = srv.api_client()
        objects = CustomObjectsApi(api)
        job = {"apiVersion": f"{G}/{V}", "kind": "TrainJob", "metadata": {"name": "demo"}}
        job["spec"] = {"runtimeRef": {"name": "torch-distributed"}}
        objects.create_namespaced_custom_object(G, V, NS, "trainjobs", job)
        yield objects
        api.close()


def patch_status(custom: CustomObjectsApi, trainer_status: Any) -> dict[str, Any]:
    body = {"status": {"trainerStatus": trainer_status}}
    return custom.patch_namespaced_custom_object_status(G, V, NS, "trainjobs", "demo", body)  # type: ignore[no-any-return]


def refusal(exc: client.ApiException) -> str:
    assert exc.status == 422
    body = json.loads(exc.body)
    assert body["reason"] == "Invalid" and body["code"] == 422
    return str(body["message"])


def test_a_status_write_reads_back_and_a_main_resource_write_keeps_it(custom: CustomObjectsApi) -> None:
    assert patch_status(custom, GOOD)["status"]["trainerStatus"] == GOOD
    custom.patch_namespaced_custom_object(G, V, NS, "trainjobs", "demo", {"status": {"trainerStatus": None}})
    got = custom.get_namespaced_custom_object(G, V, NS, "trainjobs", "demo")
    assert got["status"]["trainerStatus"] == GOOD


@pytest.mark.shared  # the double reads the CRD's schema from ../shared's upstream CRDs
@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"progressPercentage": 250}, "progressPercentage in body should be less than or equal to 100"),
        ({"estimatedRemainingSeconds": -1}, "estimatedRemainingSeconds in body should be greater than or equal to 0"),
        ({"metrics": [{"name": "m", "value": "1"}] * 257}, "status.trainerStatus.metrics: Too many: 257"),
        ({"metrics": [{"name": "x" * 65, "value": "1"}]}, "status.trainerStatus.metrics[0].name: Too long"),
    ],
)
def test_the_crds_schema_refuses_out_of_bounds_values(
    custom: CustomObjectsApi, change: dict[str, Any], message: str
) -> None:
    with pytest.raises(client.ApiException) as err:
        patch_status(custom, {**GOOD, **change})
    assert message in refusal(err.value)
    assert custom.get_namespaced_custom_object(G, V, NS, "trainjobs", "demo").get("status") is None


def test_the_crds_rule_requires_last_updated_time(custom: CustomObjectsApi) -> None:
    body = {k: v for k, v in GOOD.items() if k != "lastUpdatedTime"}
    job = custom.get_namespaced_custom_object(G, V, NS, "trainjobs", "demo")
    job["status"] = {"trainerStatus": body}
    with pytest.raises(client.ApiException) as err:
        custom.replace_namespaced_custom_object_status(G, V, NS, "trainjobs", "demo", job)
    message = refusal(err.value)
    assert message == (
        'TrainJob.trainer.kubeflow.org "demo" is invalid: status.trainerStatus: Invalid value: "object": '
        "lastUpdatedTime is required when trainerStatus is present"
    )
