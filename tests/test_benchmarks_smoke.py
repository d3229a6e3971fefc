"""`benchmarks/run.py` runs (the benchmark itself is not part of the test suite: only --quick)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "run.py"
needs_script = pytest.mark.skipif(not SCRIPT.is_file(), reason="benchmarks/ is not in this tree")

# Issue #17: ktrain median / kubectl median, per row.
TARGETS = {
    "render torch 4 nodes": 0.8,
    "completion --runtime <TAB>": 0.5,
    "runtime list": 1.0,
    "--help": 1.0,
    "job list": 1.5,
    "job get": 1.5,
    "job logs": 1.5,
    "job delete": 1.5,
}
# Each cluster command's median over its http.client floor's (benchmarks/http_floor.py).
OVER_FLOOR_TARGETS = {"job list": 1.1, "job get": 1.1, "job logs": 1.1, "job delete": 1.1}
FLOOR = SCRIPT.parent / "http_floor.py"


def bench_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_run", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # @dataclass looks its module up there
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow  # runs the benchmarks (quick mode) in a subprocess
@needs_script
def test_quick_benchmark_prints_every_figure_and_writes_json(tmp_path: Path) -> None:
    target = tmp_path / "result.json"
    out = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick", "--json", str(target)], capture_output=True, text=True, timeout=180
    )
    assert out.returncode == 0, out.stderr
    result = json.loads(target.read_text())
    cold = result["cold"]
    for row in (
        "render torch 4 nodes",
        "render -f MPI job file",
        "completion --runtime <TAB>",
        "runtime list",
        "--help",
    ):
        assert cold[row]["status"] == "ok", (row, cold[row])
        assert cold[row]["exit_codes"] == [0], (row, cold[row])
        assert cold[row]["median_ms"] > 0 and cold[row]["peak_rss_mib"] > 0
        assert row in out.stdout
    assert set(result["in_process"]) == {"torch 4 nodes", "deepspeed 16 nodes (--ssh-secret)"}
    assert {"1", "64", "1024"} <= set(result["scaling"])
    assert "status" in result["job_create"] and "job create" in out.stdout
    assert "targets:" in out.stdout

    # The cluster commands ran against the API-server double: ktrain's side always, and exited 0
    # every time (a failing command is reported, not timed).
    cluster = result["cluster"]
    assert cluster["status"] == "ok", cluster
    assert [pair["row"] for pair in cluster["pairs"]] == ["job list", "job get", "job logs", "job delete"]
    kubectl = result["kubectl_binary"]
    for pair in cluster["pairs"]:
        mine = cluster["commands"][pair["ktrain"]]
        assert mine["status"] == "ok" and mine["exit_codes"] == [0], (pair, mine)
        assert mine["runs"] == 2 and mine["requests_per_run"] >= 1
        assert pair["ktrain"] in out.stdout and pair["kubectl"] in out.stdout
        # its http.client floor made the very requests ktrain made, and got the same answers
        floor = cluster["commands"][pair["floor"]]
        assert floor["status"] == "ok" and floor["exit_codes"] == [0], (pair, floor)
        assert floor["runs"] == 2 and floor["requests_per_run"] == mine["requests_per_run"], (pair, floor)
        if kubectl:
            theirs = cluster["commands"][pair["kubectl"]]
            assert theirs["status"] == "ok" and theirs["exit_codes"] == [0], (pair, theirs)
        else:
            assert pair["kubectl"] not in cluster["commands"]

    # Every ratio row carries its target; without kubectl each is n/a and says why.
    rows = {r["row"]: r for r in result["ratios"]}
    assert {name: r["target"] for name, r in rows.items()} == TARGETS
    floors = {name: r["over_floor_target"] for name, r in rows.items() if r["over_floor_target"] is not None}
    assert floors == OVER_FLOOR_TARGETS
    for name in OVER_FLOOR_TARGETS:
        r = rows[name]
        assert r["floor_ms"] > 0 and r["over_floor"] == round(r["ktrain_ms"] / r["floor_ms"], 2), r
        assert r["over_floor_met"] is (r["over_floor"] <= r["over_floor_target"])
        assert r["floor_ratio"] == (round(r["floor_ms"] / r["kubectl_ms"], 2) if kubectl else None), r
        assert r["requests_per_run"][0] == r["requests_per_run"][2]
    assert "benchmarks/http_floor.py" in out.stdout and "ktrain over its floor" in out.stdout
    for r in rows.values():
        assert r["ktrain_ms"] > 0, r
        if kubectl:
            assert r["kubectl_ms"] > 0 and r["ratio"] == round(r["ktrain_ms"] / r["kubectl_ms"], 2)
            assert r["met"] is (r["ratio"] <= r["target"])
        else:
            assert r["ratio"] is None and r["met"] is None and r["note"] == "kubectl not on PATH"
    assert "ktrain vs kubectl" in out.stdout and "same API-server double" in out.stdout


@needs_script
def test_without_kubectl_the_ratios_are_na_and_ktrain_figures_stay() -> None:
    bench = bench_module()
    ok = {"status": "ok", "median_ms": 40.0}
    result: dict[str, Any] = {
        "cold": {name: dict(ok) for name, _ in bench.LOCAL_ROWS},
        "cluster": {
            "status": "ok",
            "pairs": [
                {"row": row, "ktrain": f"ktrain {row}", "kubectl": f"kubectl {row}"}
                for row, _, _ in bench.CLUSTER_PAIRS
            ],
            "commands": {f"ktrain {row}": dict(ok, requests_per_run=3) for row, _, _ in bench.CLUSTER_PAIRS},
        },
    }
    # the floors need no kubectl: the last row's ran, made as many requests, and took 32 ms
    result["cluster"]["pairs"][-1]["floor"] = "floor"
    result["cluster"]["commands"]["floor"] = dict(ok, median_ms=32.0, requests_per_run=3)
    rows = bench.ratio_rows(result, "kubectl not on PATH")
    assert [r["row"] for r in rows] == list(TARGETS)
    for r in rows:
        assert (r["ktrain_ms"], r["kubectl_ms"], r["ratio"], r["met"]) == (40.0, None, None, None)
        assert r["note"] == "kubectl not on PATH" + (
            "; floor not measured" if r["row"] in ("job list", "job get", "job logs") else ""
        )
    *_, last = rows
    assert last["requests_per_run"] == [3, None, 3]
    assert (last["floor_ms"], last["floor_ratio"], last["over_floor"], last["over_floor_met"]) == (
        32.0,
        None,
        1.25,
        False,
    )
    assert all(r["over_floor"] is None and r["over_floor_met"] is None for r in rows[:-1])


@pytest.mark.double
@needs_script
def test_the_floor_replays_requests_and_fails_on_an_answer_ktrain_did_not_get(tmp_path: Path) -> None:
    from apiserver import ApiServerDouble

    def floor(requests: list[list[Any]], token: str | None = "bench-token") -> subprocess.CompletedProcess[str]:
        spec = {"server": server.url, "ca_pem": server.ca_pem.decode(), "token": token, "requests": requests}
        (tmp_path / "spec.json").write_text(json.dumps(spec))
        return subprocess.run([sys.executable, str(FLOOR), str(tmp_path / "spec.json")], capture_output=True, text=True)

    with ApiServerDouble(token="bench-token", tls=True) as server:
        server.add_namespace("training")
        gone = "/api/v1/namespaces/training/configmaps/gone"
        listed = "/api/v1/namespaces/training/configmaps?limit=5"
        accept = {"Accept": "application/json"}
        ok = floor([["GET", listed, 200, accept, None], ["GET", gone, 404, accept, None]])
        assert ok.returncode == 0, ok.stderr
        sent = server.requests
        assert [(r.method, r.target, r.status) for r in sent] == [("GET", listed, 200), ("GET", gone, 404)]
        assert (
            sent[0].headers["Authorization"] == "Bearer bench-token" and sent[0].headers["Accept"] == accept["Accept"]
        )
        bad = floor([["GET", gone, 200, accept, None], ["GET", listed, 200, accept, None]])
        assert (bad.returncode, bad.stderr) == (1, f"GET {gone}: 404 (ktrain got 200)\n")
        assert len(server.requests) == 3  # it stopped at the first unexpected answer
        assert floor([["GET", listed, 200, accept, None]], token=None).returncode == 1  # 401


@needs_script
def test_a_failed_command_is_reported_with_its_stderr_not_timed(tmp_path: Path) -> None:
    bench = bench_module()
    cold = bench.Cold()
    cold.add("fails", [sys.executable, "-c", "import sys; sys.exit('boom: no such job')"], {})
    cold.add("leaves it", [sys.executable, "-c", "pass"], {}, check=lambda: "jobset x still there", strict=True)
    cold.add("fine", [sys.executable, "-c", "pass"], {}, strict=True)
    cold.measure(rounds=1, warmup=0)  # a warm-up round all the same: it is what checks
    assert cold.summary("fails")["status"] == "failed (warm-up: exit 1: boom: no such job)"
    assert cold.summary("leaves it")["status"] == "failed (warm-up: exit 0 but jobset x still there)"
    assert cold.summary("fine")["status"] == "ok" and cold.summary("fine")["runs"] == 1
    assert cold.median("fails") is None and cold.times["fails"] == []
