"""Exec credential plugins and token files that misbehave (issue #25 item 5): output without end,
a plugin that never answers (nor its children), a token file that is a FIFO, and a plugin's
expirationTimestamp that holds the token. Each is one clear error, in bounded time and memory,
that quotes no secret."""

from __future__ import annotations

import os
import resource
import sys
import time
from pathlib import Path

import pytest
from apiserver import ApiServerDouble

from ktrain.cluster import client as k
from ktrain.cluster import credentials as creds
from ktrain.cluster.connection import ConnectionOptions
from ktrain.cluster.kube import connect
from ktrain.errors import ClusterError, UsageError

SECRET = "s3cr3t-t0k3n-value"


@pytest.fixture
def srv():  # type: ignore[no-untyped-def]
    with ApiServerDouble(token=SECRET, tls=True) as double:  # credentials travel over TLS only
        yield double


@pytest.fixture(autouse=True)
def _fresh_exec_cache():  # type: ignore[no-untyped-def]
    creds._EXEC_CACHE.clear()
    yield
    creds._EXEC_CACHE.clear()


def script(tmp_path: Path, name: str, body: str) -> str:
    path = tmp_path / name
    path.write_text(f"#!{sys.executable}\n{body}\n")
    path.chmod(0o700)
    return str(path)


def exec_kubeconfig(srv: ApiServerDouble, tmp_path: Path, command: str) -> str:
    import yaml

    doc = srv.kubeconfig(anonymous=True)
    doc["users"][0]["user"] = {
        "exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": command, "interactiveMode": "Never"}
    }
    path = tmp_path / "kc"
    path.write_text(yaml.safe_dump(doc))
    return str(path)


def namespaces(kubeconfig: str) -> list[str]:
    cluster = connect(ConnectionOptions(kubeconfig=kubeconfig))
    return [o["metadata"]["name"] for o in k.list_objects(cluster, k.NAMESPACE)]


def test_a_plugin_printing_for_ever_is_stopped_at_one_mib(srv, tmp_path) -> None:
    chatty = script(tmp_path, "chatty", "import sys\nwhile True:\n    sys.stdout.write('x' * 65536)")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.monotonic()
    with pytest.raises(ClusterError, match=r"plugin '.*chatty' printed more than 1 MiB \(it was stopped\)"):
        namespaces(exec_kubeconfig(srv, tmp_path, chatty))
    assert time.monotonic() - started < 10
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kib < 50 * 1024  # read as it came, never more than 1 MiB kept
    assert srv.requests == []


def test_a_plugin_that_never_answers_is_killed_with_its_children_and_named(srv, tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(creds, "EXEC_TIMEOUT", 1.0)
    pid_file = tmp_path / "child.pid"
    # a child that keeps the plugin's output open: waiting for EOF alone would hang for ever
    hanging = script(
        tmp_path,
        "hanging",
        "import subprocess, sys, time\n"
        f"child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
        f"open({str(pid_file)!r}, 'w').write(str(child.pid))\n"
        "time.sleep(600)",
    )
    started = time.monotonic()
    with pytest.raises(ClusterError, match=r"plugin '.*hanging' did not answer within 1s \(it was stopped\)"):
        namespaces(exec_kubeconfig(srv, tmp_path, hanging))
    assert time.monotonic() - started < 8
    child = int(pid_file.read_text())
    for _ in range(50):  # killed with its process group
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        pytest.fail("the plugin's child outlived it")


def test_an_expiration_timestamp_is_never_quoted(srv, tmp_path) -> None:
    leaky = script(
        tmp_path,
        "leaky",
        "import json\nprint(json.dumps({'apiVersion': 'client.authentication.k8s.io/v1', 'kind': 'ExecCredential',"
        f" 'status': {{'token': 'x', 'expirationTimestamp': {SECRET!r}}}}}))",
    )
    with pytest.raises(ClusterError, match="an expirationTimestamp that is not an RFC 3339 time") as info:
        namespaces(exec_kubeconfig(srv, tmp_path, leaky))
    assert SECRET not in str(info.value) and SECRET not in str(info.value.hint)


def test_a_token_file_that_is_a_fifo_is_refused_at_once(srv, tmp_path) -> None:
    import yaml

    fifo = tmp_path / "token"
    os.mkfifo(fifo)
    doc = srv.kubeconfig(anonymous=True)
    doc["users"][0]["user"] = {"tokenFile": str(fifo)}
    (tmp_path / "kc").write_text(yaml.safe_dump(doc))
    started = time.monotonic()
    with pytest.raises(UsageError, match=f"the kubeconfig's tokenFile {fifo} is not a regular file"):
        namespaces(str(tmp_path / "kc"))
    assert time.monotonic() - started < 5
    assert srv.requests == []


def test_a_token_file_that_is_a_directory_is_refused(srv, tmp_path) -> None:
    import yaml

    doc = srv.kubeconfig(anonymous=True)
    doc["users"][0]["user"] = {"tokenFile": str(tmp_path)}
    (tmp_path / "kc").write_text(yaml.safe_dump(doc))
    with pytest.raises(UsageError, match="tokenFile"):
        namespaces(str(tmp_path / "kc"))
