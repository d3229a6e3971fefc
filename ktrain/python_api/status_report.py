"""`ktrain.update_trainjob_status`: a training script reports its progress, as with the Kubeflow SDK's
`kubeflow.trainer.update_trainjob_status` (0.5.0), whose signature, request and rules it keeps:

- it does something only inside a TrainJob whose controller has the TrainJobStatus feature gate
  (or a `ktrain job run --local`): `KUBEFLOW_TRAINER_SERVER_URL` set, a token at
  `KUBEFLOW_TRAINER_SERVER_TOKEN`; else it returns False;
- at most one update every 5 seconds (the others return False); the token is read again after 5
  minutes (it rotates);
- it POSTs `{"trainerStatus": {lastUpdatedTime, progressPercentage (clamped to 0-100),
  estimatedRemainingSeconds (at least 0), metrics: [{name, value}] (values as strings, at most
  256)}}` with the bearer token, checking the server against `KUBEFLOW_TRAINER_SERVER_CA_CERT`;
- it returns True when the server answered 200, and never raises: reporting must not stop training.

The standard library only (the SDK needs `requests`): a training image need not have ktrain's
dependencies for this module, which imports nothing of ktrain.
"""

from __future__ import annotations

import logging
import os
import ssl
import threading
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

_logger = logging.getLogger(__name__)

_ENV_SERVER_URL = "KUBEFLOW_TRAINER_SERVER_URL"
_ENV_CA_CERT = "KUBEFLOW_TRAINER_SERVER_CA_CERT"
_ENV_TOKEN_PATH = "KUBEFLOW_TRAINER_SERVER_TOKEN"
_MIN_UPDATE_INTERVAL_SECONDS = 5.0
_TOKEN_CACHE_TTL_SECONDS = 300.0
_MAX_METRICS_COUNT = 256
_TIMEOUT_SECONDS = 5.0
_MAX_TOKEN_BYTES = 64 * 1024

_lock = threading.Lock()
_last_update_time = 0.0
_cached_token: str | None = None
_token_read_time = 0.0


def _token(path: str | None) -> str | None:
    global _cached_token, _token_read_time
    now = time.monotonic()
    if _cached_token and now - _token_read_time < _TOKEN_CACHE_TTL_SECONDS:
        return _cached_token
    if not path or not os.path.exists(path):
        return None
    try:
        with open(path, "rb") as f:
            token = f.read(_MAX_TOKEN_BYTES).decode("utf-8", "replace").strip()
    except OSError as exc:
        _logger.warning("Unable to read token from %s: %s", path, exc)
        return None
    _cached_token, _token_read_time = token, now
    return token


def _ssl_context(ca_file: str | None) -> Any:
    if ca_file and os.path.exists(ca_file):
        return ssl.create_default_context(cafile=ca_file)
    return ssl.create_default_context()


def update_trainjob_status(
    progress_percent: int | None = None,
    estimated_remaining_seconds: int | None = None,
    metrics: dict[str, float | int | str] | None = None,
) -> bool:
    """Report training progress to the Kubeflow Trainer controller (or a local run).

    Safe to call anywhere: False when not inside a TrainJob that reports progress, when throttled
    (one update per 5 seconds) or when the update failed; True when it was sent. Never raises.

    Args:
        progress_percent: training completion percentage (0-100).
        estimated_remaining_seconds: ETA in seconds.
        metrics: metric name -> value; values are sent as strings, at most 256 of them.
    """
    global _last_update_time
    try:
        url = os.environ.get(_ENV_SERVER_URL)
        if not url:
            return False
        with _lock:
            if time.monotonic() - _last_update_time < _MIN_UPDATE_INTERVAL_SECONDS:
                return False
        token = _token(os.environ.get(_ENV_TOKEN_PATH))
        if not token:
            _logger.debug("No authentication token available")
            return False
        from datetime import datetime, timezone

        status: dict[str, Any] = {"lastUpdatedTime": datetime.now(timezone.utc).isoformat()}
        if progress_percent is not None:
            status["progressPercentage"] = max(0, min(100, progress_percent))
        if estimated_remaining_seconds is not None:
            status["estimatedRemainingSeconds"] = max(0, estimated_remaining_seconds)
        if metrics:
            if len(metrics) > _MAX_METRICS_COUNT:
                _logger.warning(
                    "metrics dict has %d entries, truncating to %d (SDK limit)", len(metrics), _MAX_METRICS_COUNT
                )
                metrics = dict(list(metrics.items())[:_MAX_METRICS_COUNT])
            status["metrics"] = [{"name": str(k), "value": str(v)} for k, v in metrics.items()]
        import json
        import urllib.error
        import urllib.request

        request = urllib.request.Request(
            url,
            data=json.dumps({"trainerStatus": status}).encode(),
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
            method="POST",
        )
        try:
            with urllib.request.urlopen(  # noqa: S310 - the controller's https URL
                request, timeout=_TIMEOUT_SECONDS, context=_ssl_context(os.environ.get(_ENV_CA_CERT))
            ) as response:
                code = response.status
                response.read(64 * 1024)
        except urllib.error.HTTPError as exc:
            code = exc.code
            _logger.debug("Response body: %.500s", exc.read(500).decode("utf-8", "replace"))
        if code == 200:
            with _lock:
                _last_update_time = time.monotonic()
            _logger.debug("Status update sent: %s%%", progress_percent)
            return True
        _logger.warning("Status update failed: HTTP %s", code)
        return False
    except OSError as exc:  # urllib.error.URLError, timeouts, TLS failures
        _logger.warning("Failed to send status update: %s", exc)
        return False
    except Exception as exc:  # noqa: BLE001 - never raise into a training loop, as the SDK
        _logger.warning("Unexpected error in update_trainjob_status: %s", exc)
        return False
