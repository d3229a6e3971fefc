"""A local run's status endpoint answers as upstream's status server (pkg/statusserver/server.go and
its server_test.go cases), over real HTTPS with the run's own CA and token."""

from __future__ import annotations

import http.client
import json
import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ktrain.local.status_server import StatusServer

PATH = "/apis/trainer.kubeflow.org/v1alpha1/namespaces/team/trainjobs/demo/status"
GOOD = {
    "trainerStatus": {
        "progressPercentage": 45,
        "estimatedRemainingSeconds": 120,
        "metrics": [{"name": "loss", "value": "0.15"}, {"name": "accuracy", "value": "0.92"}],
        "lastUpdatedTime": "2026-06-12T03:00:00.123456+00:00",
    }
}


@pytest.fixture
def server(tmp_path: Path) -> Iterator[StatusServer]:
    srv = StatusServer(str(tmp_path / "status"), "team", "demo").start()
    yield srv
    srv.stop()


def post(
    srv: StatusServer,
    body: bytes,
    *,
    path: str = PATH,
    token: str | None = None,
    method: str = "POST",
    chunked: bool = False,
) -> tuple[int, Any]:
    context = ssl.create_default_context(cafile=srv.ca_path)  # verifies 127.0.0.1 against the run's CA
    conn = http.client.HTTPSConnection("127.0.0.1", srv.port, context=context, timeout=10)
    headers = {"Authorization": f"Bearer {srv.token if token is None else token}", "Content-Type": "application/json"}
    if chunked:
        conn.putrequest(method, path)
        for key, value in {**headers, "Transfer-Encoding": "chunked"}.items():
            conn.putheader(key, value)
        conn.endheaders()
        for start in range(0, len(body), 4096):
            piece = body[start : start + 4096]
            conn.send(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
        conn.send(b"0\r\n\r\n")
    else:
        conn.request(method, path, body=body, headers=headers)
    response = conn.getresponse()
    data = response.read()
    assert response.getheader("Content-Type") == "application/json"
    conn.close()
    return response.status, json.loads(data)


def failure(code: int, message: str, reason: str) -> dict[str, Any]:
    return {"metadata": {}, "status": "Failure", "message": message, "reason": reason, "code": code}


def test_an_update_is_accepted_echoed_as_decoded_and_kept(server: StatusServer) -> None:
    code, body = post(server, json.dumps(GOOD).encode())
    assert code == 200
    assert body == {"trainerStatus": {**GOOD["trainerStatus"], "lastUpdatedTime": "2026-06-12T03:00:00Z"}}
    assert server.latest is not None and server.latest.progress_percentage == 45
    assert [m.name for m in server.latest.metrics] == ["loss", "accuracy"]


@pytest.mark.parametrize(
    ("body", "token", "path", "method", "want"),
    [
        (GOOD, "wrong", PATH, "POST", (403, "Forbidden", "Forbidden")),
        (GOOD, "", PATH, "POST", (403, "Forbidden", "Forbidden")),
        (GOOD, None, PATH.replace("/demo/", "/other/"), "POST", (403, "Forbidden", "Forbidden")),
        (b"invalid payload", None, PATH, "POST", (422, "Invalid payload", "Invalid")),
        (b"{}{}", None, PATH, "POST", (422, "Invalid payload", "Invalid")),
        (b"{} invalid payload", None, PATH, "POST", (422, "Invalid payload", "Invalid")),
        (b"{}]", None, PATH, "POST", (422, "Invalid payload", "Invalid")),
        ({"trainerStatus": {"progressPercentage": "45"}}, None, PATH, "POST", (422, "Invalid payload", "Invalid")),
        ({"trainerStatus": {"progressPercentage": 4.5}}, None, PATH, "POST", (422, "Invalid payload", "Invalid")),
        ({"trainerStatus": {"lastUpdatedTime": "soon"}}, None, PATH, "POST", (422, "Invalid payload", "Invalid")),
        (GOOD, None, "/unsupported-route", "GET", (404, "Not found", "NotFound")),
        (GOOD, None, PATH, "GET", (404, "Not found", "NotFound")),
    ],
)
def test_refusals_are_upstreams_status_objects(
    server: StatusServer, body: Any, token: str | None, path: str, method: str, want: tuple[int, str, str]
) -> None:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    code, answer = post(server, raw, token=token, path=path, method=method)
    assert (code, answer) == (want[0], failure(*want))
    assert server.latest is None


@pytest.mark.parametrize("chunked", [False, True])
def test_a_body_over_64_kib_is_payload_too_large(server: StatusServer, chunked: bool) -> None:
    big = b'{"trainerStatus": {"metrics": [' + b'{"name":"m","value":"0.5"},' * 40000 + b"]}}"
    assert post(server, big, chunked=chunked) == (413, failure(413, "Payload too large", "RequestEntityTooLarge"))


@pytest.mark.parametrize("body", [b"{}", b"null", b'{"trainerStatus": null}', b'{"other": 1}'])
def test_no_trainer_status_is_200_and_changes_nothing(server: StatusServer, body: bytes) -> None:
    assert post(server, body) == (200, {})
    assert server.latest is None


def test_what_the_crd_refuses_is_422_with_the_api_servers_message(server: StatusServer) -> None:
    bad = {"trainerStatus": {"progressPercentage": 250, "estimatedRemainingSeconds": -1}}
    code, answer = post(server, json.dumps(bad).encode())
    assert code == 422 and answer["reason"] == "Invalid"
    message = answer["message"]
    assert message.startswith('TrainJob.trainer.kubeflow.org "demo" is invalid: [')
    assert "status.trainerStatus.progressPercentage in body should be less than or equal to 100" in message
    assert "status.trainerStatus.estimatedRemainingSeconds in body should be greater than or equal to 0" in message
    assert "lastUpdatedTime is required when trainerStatus is present" in message
    many = {
        "trainerStatus": {"lastUpdatedTime": "2026-06-12T03:00:00Z", "metrics": [{"name": "m", "value": "1"}] * 257}
    }
    code, answer = post(server, json.dumps(many).encode())
    assert code == 422 and "must have at most 256 items" in answer["message"]


def test_the_field_names_match_as_go_matches_them(server: StatusServer) -> None:
    body = {"TrainerStatus": {"ProgressPercentage": 7, "lastupdatedtime": "2026-06-12T03:00:00Z"}}
    assert post(server, json.dumps(body).encode())[0] == 200
    assert server.latest is not None and server.latest.progress_percentage == 7


def test_the_token_and_ca_are_the_runs_own(server: StatusServer) -> None:
    assert Path(server.token_path).read_text() == server.token and len(server.token) >= 40
    assert Path(server.token_path).stat().st_mode & 0o077 == 0
    assert not (Path(server.directory) / "server.key").exists()  # loaded, then removed
    assert server.env()["KUBEFLOW_TRAINER_SERVER_URL"] == f"https://127.0.0.1:{server.port}{PATH}"
