"""The API-server double's HTTP rules (tests/apiserver/README.md), one test per rule, spoken to
with raw HTTP so that the exact headers are the ones under test: the double refuses what the real
kube-apiserver refuses, and answers what it answers."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from typing import Any

import pytest
import urllib3
import yaml
from apiserver import ApiServerDouble

JSON = dict[str, Any]
ACCEPTED = (
    "only the following media types are accepted: application/json, application/yaml, "
    "application/vnd.kubernetes.protobuf"
)
JS = "/apis/jobset.x-k8s.io/v1alpha2/namespaces/default/jobsets"
CM = "/api/v1/namespaces/default/configmaps"
LOG = "/api/v1/namespaces/default/pods/p/log"


@pytest.fixture
def srv() -> Iterator[ApiServerDouble]:
    with ApiServerDouble() as double:
        double.add_pod("p", phase="Running")
        double.append_log("p", "hello\nworld")
        yield double


@pytest.fixture
def http() -> Iterator[urllib3.PoolManager]:
    pool = urllib3.PoolManager(retries=False)
    yield pool
    pool.clear()


def call(
    srv: ApiServerDouble,
    http: urllib3.PoolManager,
    method: str,
    path: str,
    *,
    accept: str | None = None,
    content_type: str | None = None,
    body: Any = None,
    **kwargs: Any,
) -> urllib3.BaseHTTPResponse:
    headers = {}
    if accept is not None:
        headers["Accept"] = accept
    if content_type is not None:
        headers["Content-Type"] = content_type
    data = body if isinstance(body, (bytes, type(None))) else json.dumps(body).encode()
    return http.request(method, srv.url + path, headers=headers, body=data, **kwargs)


def status_body(response: urllib3.BaseHTTPResponse, code: int, reason: str) -> JSON:
    assert response.status == code, response.data
    assert response.headers["Content-Type"] == "application/json"
    body = json.loads(response.data)
    assert body["kind"] == "Status" and body["apiVersion"] == "v1" and body["metadata"] == {}
    assert (body["status"], body["reason"], body["code"]) == ("Failure", reason, code)
    return body


def configmap(name: str) -> JSON:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"k": "v"}}


def jobset(name: str) -> JSON:
    pod = {"containers": [{"name": "node", "image": "trainer:latest"}]}
    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": name},
        "spec": {"replicatedJobs": [{"name": "node", "template": {"spec": {"template": {"spec": pod}}}}]},
    }


# --- pods/log content negotiation (issue #18) ----------------------------------------------------


def test_log_with_accept_text_plain_alone_is_refused_406_as_the_real_server_does(srv, http) -> None:
    r = call(srv, http, "GET", LOG, accept="text/plain")
    assert status_body(r, 406, "NotAcceptable")["message"] == ACCEPTED
    assert "details" not in json.loads(r.data)


@pytest.mark.parametrize("accept", ["application/json", "*/*", "text/plain, */*", "application/json, */*", None])
def test_log_with_an_accept_the_server_serves_is_streamed_as_text_plain(srv, http, accept) -> None:
    r = call(srv, http, "GET", LOG, accept=accept)
    assert r.status == 200
    assert r.headers["Content-Type"] == "text/plain"
    assert r.data == b"hello\nworld\n"


def test_log_follow_negotiates_before_streaming(srv, http) -> None:
    refused = call(srv, http, "GET", LOG + "?follow=true", accept="text/plain")
    assert status_body(refused, 406, "NotAcceptable")["message"] == ACCEPTED
    srv.terminate_container("p")
    r = call(srv, http, "GET", LOG + "?follow=true", accept="application/json, */*")
    assert (r.status, r.headers["Content-Type"], r.data) == (200, "text/plain", b"hello\nworld\n")


# --- Accept on every other endpoint ----------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        CM,
        CM + "/x",
        JS,
        "/api/v1/pods",
        "/api/v1/namespaces/default/events",
        "/api",
        "/apis",
        "/apis/jobset.x-k8s.io/v1alpha2",
    ],
)
def test_gets_lists_and_discovery_refuse_an_accept_they_do_not_serve(srv, http, path) -> None:
    srv.put_object(configmap("x") | {"metadata": {"name": "x", "namespace": "default"}})
    r = call(srv, http, "GET", path, accept="text/plain")
    assert status_body(r, 406, "NotAcceptable")["message"] == ACCEPTED


def test_writes_refuse_an_accept_they_do_not_serve_and_store_nothing(srv, http) -> None:
    create = call(srv, http, "POST", CM, accept="text/html", content_type="application/json", body=configmap("a"))
    status_body(create, 406, "NotAcceptable")
    apply = call(
        srv,
        http,
        "PATCH",
        JS + "/j?fieldManager=t",
        accept="text/plain",
        content_type="application/apply-patch+yaml",
        body=jobset("j"),
    )
    status_body(apply, 406, "NotAcceptable")
    assert srv.objects("configmaps", "default") == [] and srv.objects("jobsets", "default") == []


def test_accept_clauses_are_tried_by_quality_and_wildcards_match(srv, http) -> None:
    srv.put_object(configmap("x") | {"metadata": {"name": "x", "namespace": "default"}})
    for accept in ("text/plain;q=1, application/json;q=0.5", "application/*", "*/*;q=0.1", "application/json, */*"):
        r = call(srv, http, "GET", CM + "/x", accept=accept)
        assert (r.status, r.headers["Content-Type"]) == (200, "application/json"), accept
    assert call(srv, http, "GET", CM + "/x").headers["Content-Type"] == "application/json"  # none: JSON


def test_accept_application_yaml_is_answered_in_yaml(srv, http) -> None:
    srv.put_object(configmap("x") | {"metadata": {"name": "x", "namespace": "default"}})
    r = call(srv, http, "GET", CM + "/x", accept="application/yaml")
    assert (r.status, r.headers["Content-Type"]) == (200, "application/yaml")
    assert yaml.safe_load(r.data)["data"] == {"k": "v"}


def test_a_conversion_the_double_does_not_serve_is_skipped_like_an_unknown_type(srv, http) -> None:
    # `as=Table` asks for a server-side conversion; without a plain fallback clause nothing matches here.
    r = call(srv, http, "GET", CM, accept="application/json;as=Table;v=v1;g=meta.k8s.io, application/json")
    assert (r.status, json.loads(r.data)["kind"]) == (200, "ConfigMapList")


# --- watches ---------------------------------------------------------------------------------------


def test_a_watch_needs_a_streaming_media_type(srv, http) -> None:
    r = call(srv, http, "GET", CM + "?watch=true&timeoutSeconds=1", accept="application/yaml")
    # The Status itself is negotiated like any answer (responsewriters.ErrorNegotiated): YAML here.
    assert (r.status, r.headers["Content-Type"]) == (406, "application/yaml")
    body = yaml.safe_load(r.data)
    assert (body["kind"], body["reason"], body["code"]) == ("Status", "NotAcceptable", 406)
    assert body["message"] == (
        "only the following media types are accepted: "
        "application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch"
    )


def test_watch_events_are_json_lines_of_type_and_object_in_chunks(srv, http) -> None:
    srv.put_object(configmap("x") | {"metadata": {"name": "x", "namespace": "default"}})
    r = call(srv, http, "GET", CM + "?watch=true&timeoutSeconds=1", accept="application/json", preload_content=False)
    assert r.status == 200
    assert r.headers["Content-Type"] == "application/json"
    assert r.headers["Transfer-Encoding"] == "chunked"
    data = r.read()
    lines = data.split(b"\n")
    assert lines[-1] == b""  # every event ends with a newline (json.Framer)
    event = json.loads(lines[0])
    assert set(event) == {"type", "object"} and event["type"] == "ADDED"
    assert event["object"]["metadata"]["name"] == "x"


# --- Content-Type per verb -------------------------------------------------------------------------


def test_create_refuses_a_body_media_type_it_does_not_decode_415(srv, http) -> None:
    r = call(srv, http, "POST", CM, accept="application/json", content_type="text/plain", body=configmap("a"))
    assert status_body(r, 415, "UnsupportedMediaType")["message"] == (
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json, application/yaml, application/vnd.kubernetes.protobuf"
    )
    assert srv.objects("configmaps", "default") == []


def test_create_takes_yaml_and_json_bodies_and_answers_201(srv, http) -> None:
    body = yaml.safe_dump(configmap("y")).encode()
    assert call(srv, http, "POST", CM, content_type="application/yaml", body=body).status == 201
    assert call(srv, http, "POST", CM, content_type="application/json", body=configmap("j")).status == 201
    assert sorted(o["metadata"]["name"] for o in srv.objects("configmaps", "default")) == ["j", "y"]


def test_patch_refuses_a_content_type_that_is_not_a_patch_type(srv, http) -> None:
    r = call(srv, http, "PATCH", JS + "/j?fieldManager=t", content_type="application/json", body=jobset("j"))
    assert status_body(r, 415, "UnsupportedMediaType")["message"] == (
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
    )


def test_delete_options_in_an_unknown_media_type_are_refused_415(srv, http) -> None:
    srv.put_object(configmap("x") | {"metadata": {"name": "x", "namespace": "default"}})
    body = {"apiVersion": "v1", "kind": "DeleteOptions"}
    r = call(srv, http, "DELETE", CM + "/x", content_type="text/plain", body=body)
    status_body(r, 415, "UnsupportedMediaType")
    assert srv.get_object("configmaps", "x") is not None
    assert call(srv, http, "DELETE", CM + "/x", content_type="application/json", body=body).status == 200
    assert srv.get_object("configmaps", "x") is None


def test_a_custom_resource_float_with_an_integral_value_is_an_integer(srv, http) -> None:
    from conftest import need_shared

    need_shared()  # custom resources are validated against the CRD schemas under ../shared

    def trainjob(name: str, cpu: float) -> JSON:
        resources = {"limits": {"cpu": cpu}, "requests": {"cpu": cpu}}
        return {
            "apiVersion": "trainer.kubeflow.org/v1alpha1",
            "kind": "TrainJob",
            "metadata": {"name": name},
            "spec": {"runtimeRef": {"name": "torch-distributed"}, "trainer": {"resourcesPerNode": resources}},
        }

    path = "/apis/trainer.kubeflow.org/v1alpha1/namespaces/default/trainjobs"
    r = call(srv, http, "POST", path, content_type="application/json", body=trainjob("whole", 2.0))
    assert r.status == 201, r.data
    assert b'"cpu": 2}' in r.data or b'"cpu":2}' in r.data  # read back as the integer 2
    assert srv.get_object("trainjobs", "whole")["spec"]["trainer"]["resourcesPerNode"]["limits"]["cpu"] == 2
    body = status_body(
        call(srv, http, "POST", path, content_type="application/json", body=trainjob("half", 0.5)), 422, "Invalid"
    )
    assert "spec.trainer.resourcesPerNode.limits.cpu" in body["message"]
    assert srv.get_object("trainjobs", "half") is None


# --- server-side apply and dry run ----------------------------------------------------------------


def test_apply_answers_201_when_it_creates_and_200_when_it_updates(srv, http) -> None:
    path = JS + "/j?fieldManager=ktrain"
    first = call(srv, http, "PATCH", path, content_type="application/apply-patch+yaml", body=jobset("j"))
    again = call(srv, http, "PATCH", path, content_type="application/apply-patch+yaml", body=jobset("j"))
    assert (first.status, again.status) == (201, 200)


def test_a_dry_run_apply_of_a_new_object_answers_201_and_stores_nothing(srv, http) -> None:
    path = JS + "/j?fieldManager=ktrain&dryRun=All"
    r = call(srv, http, "PATCH", path, content_type="application/apply-patch+yaml", body=jobset("j"))
    assert r.status == 201 and json.loads(r.data)["metadata"]["uid"]
    assert srv.objects("jobsets", "default") == []


def test_a_dry_run_value_other_than_all_is_invalid_422(srv, http) -> None:
    r = call(
        srv,
        http,
        "PATCH",
        JS + "/j?fieldManager=t&dryRun=yes",
        content_type="application/apply-patch+yaml",
        body=jobset("j"),
    )
    body = status_body(r, 422, "Invalid")
    assert 'Unsupported value: "yes": supported values: "All"' in body["message"]


# --- fault injection -------------------------------------------------------------------------------


def test_a_lost_response_fault_stores_the_write_and_resets_the_connection(srv, http) -> None:
    fault = srv.lose_response("apply", "jobsets")
    with pytest.raises(urllib3.exceptions.ProtocolError):
        call(
            srv, http, "PATCH", JS + "/j?fieldManager=t", content_type="application/apply-patch+yaml", body=jobset("j")
        )
    assert fault.hits == 1
    assert [o["metadata"]["name"] for o in srv.objects("jobsets", "default")] == ["j"]
    assert call(srv, http, "GET", JS + "/j").status == 200  # the server itself is still there


def test_a_reset_fault_drops_the_request_before_it_is_carried_out(srv, http) -> None:
    srv.inject(verb="create", resource="configmaps", action="reset", times=1)
    with pytest.raises(urllib3.exceptions.ProtocolError):
        call(srv, http, "POST", CM, content_type="application/json", body=configmap("a"))
    assert srv.objects("configmaps", "default") == []


def test_a_go_away_fault_stores_the_write_then_refuses_every_later_connection(srv, http) -> None:
    srv.go_away("apply", "jobsets")
    with pytest.raises(urllib3.exceptions.ProtocolError):
        call(
            srv, http, "PATCH", JS + "/j?fieldManager=t", content_type="application/apply-patch+yaml", body=jobset("j")
        )
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", srv.port), timeout=2).close()
    assert [o["metadata"]["name"] for o in srv.objects("jobsets", "default")] == ["j"]


def test_faults_can_match_only_real_writes_not_dry_runs(srv, http) -> None:
    srv.inject(verb="apply", resource="jobsets", code=500, dry_run=False)
    dry = call(
        srv,
        http,
        "PATCH",
        JS + "/j?fieldManager=t&dryRun=All",
        content_type="application/apply-patch+yaml",
        body=jobset("j"),
    )
    real = call(
        srv, http, "PATCH", JS + "/j?fieldManager=t", content_type="application/apply-patch+yaml", body=jobset("j")
    )
    assert (dry.status, real.status) == (201, 500)
