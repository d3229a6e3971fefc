"""`ktrain.update_trainjob_status` against the Kubeflow SDK's own (0.5), both posting to one local
HTTPS server (ktrain's local status endpoint, which answers as upstream's status server): the same
requests, the same answers, the same rules (throttle, clamping, 256 metrics, never raising)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import ktrain
from ktrain.local.status_server import StatusServer

sdk_utils = pytest.importorskip("kubeflow.trainer.backends.kubernetes.utils")
from kubeflow.trainer import update_trainjob_status as sdk_update  # noqa: E402

from ktrain.python_api import status_report  # noqa: E402


class Recording(StatusServer):
    def __init__(self, directory: str) -> None:
        super().__init__(directory, "team", "demo")
        self.requests: list[dict[str, Any]] = []

    def answer(self, method: str, path: str, authorization: str | None, body: bytes | None) -> tuple[int, bytes]:
        code, answer = super().answer(method, path, authorization, body)
        self.requests.append({"method": method, "path": path, "auth": authorization, "body": body, "code": code})
        return code, answer


def _reset_throttles() -> None:
    sdk_utils._last_update_time = 0.0
    sdk_utils._cached_token = None
    sdk_utils._token_read_time = 0.0
    status_report._last_update_time = 0.0
    status_report._cached_token = None
    status_report._token_read_time = 0.0


@pytest.fixture
def server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Recording]:
    srv = Recording(str(tmp_path / "status"))
    srv.start()
    for key, value in srv.env().items():
        monkeypatch.setenv(key, value)
    _reset_throttles()
    yield srv
    srv.stop()
    _reset_throttles()


CALLS: list[dict[str, Any]] = [
    {"progress_percent": 45, "estimated_remaining_seconds": 3600, "metrics": {"loss": 0.2347, "accuracy": 0.9876}},
    {"progress_percent": 0},
    {"progress_percent": 250, "estimated_remaining_seconds": -5},  # clamped to 100 and 0 by both
    {"metrics": {f"m{i}": i for i in range(300)}},  # truncated to 256 by both
    {"metrics": {"text": "warm-up", "step": 7}},
    {},
]


def _sent(record: dict[str, Any]) -> dict[str, Any]:
    body = json.loads(record["body"])
    updated = body["trainerStatus"].pop("lastUpdatedTime")
    assert updated.endswith("+00:00")  # datetime.now(timezone.utc).isoformat(), as the SDK
    return body


@pytest.mark.parametrize("call", CALLS, ids=lambda c: ",".join(c) or "nothing")
def test_ktrain_sends_what_the_sdk_sends_and_both_are_accepted_alike(server: Recording, call: dict[str, Any]) -> None:
    assert sdk_update(**call) is True
    _reset_throttles()
    assert ktrain.update_trainjob_status(**call) is True
    sdk, ours = server.requests
    assert (ours["method"], ours["path"], ours["auth"], ours["code"]) == (
        sdk["method"],
        sdk["path"],
        sdk["auth"],
        sdk["code"],
    )
    assert _sent(ours) == _sent(sdk)


def test_both_throttle_to_one_update_per_five_seconds(server: Recording) -> None:
    assert sdk_update(progress_percent=1) is True and sdk_update(progress_percent=2) is False
    assert ktrain.update_trainjob_status(progress_percent=1) is True
    assert ktrain.update_trainjob_status(progress_percent=2) is False
    assert len(server.requests) == 2


def test_a_refused_update_is_false_for_both_and_never_raises(server: Recording, tmp_path: Path) -> None:
    (tmp_path / "wrong").write_text("not-the-token")
    os.environ["KUBEFLOW_TRAINER_SERVER_TOKEN"] = str(tmp_path / "wrong")
    assert sdk_update(progress_percent=1) is False
    _reset_throttles()
    assert ktrain.update_trainjob_status(progress_percent=1) is False
    assert [r["code"] for r in server.requests] == [403, 403]


def test_outside_a_trainjob_both_do_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KUBEFLOW_TRAINER_SERVER_URL", raising=False)
    assert sdk_update(progress_percent=1) is False and ktrain.update_trainjob_status(progress_percent=1) is False


def test_an_unreachable_server_is_false_not_an_exception(server: Recording, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KUBEFLOW_TRAINER_SERVER_URL", "https://127.0.0.1:9/apis/x/status")
    assert ktrain.update_trainjob_status(progress_percent=1) is False
    monkeypatch.setenv("KUBEFLOW_TRAINER_SERVER_CA_CERT", str(server.token_path))  # not a certificate
    monkeypatch.setenv("KUBEFLOW_TRAINER_SERVER_URL", server.url)
    assert ktrain.update_trainjob_status(progress_percent=1) is False


def test_the_signature_is_the_sdks() -> None:
    import inspect

    assert str(inspect.signature(ktrain.update_trainjob_status)) == str(inspect.signature(sdk_update))
