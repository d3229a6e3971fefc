"""Cluster faults on every write of `ktrain job create` (issue #12 item 13), against the
API-server double: each write refused (409, 422, 500), its answer lost after the server stored
it, or the server gone right after storing it. Every run ends with nothing left on the cluster,
or with an exact report of what may be left and the command that removes it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from apiserver import ApiServerDouble
from gang_runtimes import COSCHEDULING, write_runtime

from ktrain.errors import ExitCode

pytestmark = pytest.mark.both_transports  # each test runs through both HTTP clients (conftest)

NS = "team-a"
TYPES = (
    ("configmaps", None, "configmap"),
    ("secrets", None, "secret"),
    ("jobsets", None, "jobset.jobset.x-k8s.io"),
    ("podgroups", "scheduling.x-k8s.io", "podgroup.scheduling.x-k8s.io"),
    ("trainjobs", None, "trainjob.trainer.kubeflow.org"),
)


def left_on(srv: ApiServerDouble) -> set[str]:
    """Every object of the kinds `job create` writes, as `type/name` (as ktrain names them)."""
    out = set()
    for plural, group, type_name in TYPES:
        out |= {f"{type_name}/{o['metadata']['name']}" for o in srv.objects(plural, NS, group)}
    return out


def scenario_args(name: str, tmp_path: Path) -> tuple[list[str], list[tuple[str, str, str]]]:
    """(create arguments, its real writes in order as (verb, resource, name)): server-side applies
    of each object, then the JobSet's resume, a merge patch of spec.suspend alone (issue #19). The
    order is asserted by test_the_writes_of_each_scenario_are_the_ones_faulted below."""
    if name == "mpi":
        args = ["--runtime", "deepspeed-distributed", "--name", "ds"]
        writes = [
            ("apply", "jobsets", "ds"),
            ("apply", "secrets", "ds-mpi-ssh-auth"),
            ("apply", "configmaps", "ds-mpi-hostfile"),
            ("patch", "jobsets", "ds"),
        ]
    elif name == "gang":
        runtime = write_runtime(tmp_path, COSCHEDULING)
        args = ["--runtime-file", str(runtime), "--runtime", COSCHEDULING[0], "--name", "gc"]
        writes = [("apply", "jobsets", "gc"), ("apply", "podgroups", "gc"), ("patch", "jobsets", "gc")]
    else:
        args = ["--runtime", "torch-distributed", "--name", "tj", "--target", "trainjob"]
        writes = [("apply", "trainjobs", "tj")]
    return args, writes


def fault_at(writes: list[tuple[str, str, str]], nth: int) -> tuple[str, int]:
    """(verb, its count so far): where the double must fault to hit the nth write. A "patch" fault
    also sees server-side applies (to RBAC an apply is a patch), so it counts them too."""
    verb = writes[nth - 1][0]
    return verb, sum(1 for w in writes[:nth] if verb == "patch" or w[0] == verb)


SCENARIOS = {"mpi": 4, "gang": 3, "trainjob": 1}
WRITES = [(scenario, n) for scenario, count in SCENARIOS.items() for n in range(1, count + 1)]


def create(cli: Any, kube: Any, args: list[str]) -> Any:
    return cli("job", "create", *kube.args(), *args)


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_the_writes_of_each_scenario_are_the_ones_faulted(cli, kube, tmp_path, scenario) -> None:
    args, writes = scenario_args(scenario, tmp_path)
    r = create(cli, kube, args)
    assert r.exit_code == 0, r.stderr
    real = [
        (req.verb, req.resource.split(".")[0], req.name)
        for req in kube.srv.requests
        if req.verb in ("apply", "patch") and not req.param("dryRun")
    ]
    assert real == writes


@pytest.mark.parametrize("code", [409, 422, 500])
@pytest.mark.parametrize(("scenario", "nth"), WRITES)
def test_a_refused_write_leaves_nothing(cli, kube, tmp_path, scenario, nth, code) -> None:
    args, writes = scenario_args(scenario, tmp_path)
    verb, at = fault_at(writes, nth)
    fault = kube.srv.inject(verb=verb, nth=at, code=code, dry_run=False)
    r = create(cli, kube, args)
    assert fault.hits == 1
    assert r.exit_code == ExitCode.CLUSTER, r.stderr
    assert "Traceback" not in r.stderr
    assert left_on(kube.srv) == set()
    if nth > 1:
        assert "nothing was left on the cluster" in r.stderr, r.stderr


@pytest.mark.parametrize(("scenario", "nth"), WRITES)
def test_a_write_whose_answer_is_lost_is_rolled_back(cli, kube, tmp_path, scenario, nth) -> None:
    args, writes = scenario_args(scenario, tmp_path)
    verb, at = fault_at(writes, nth)
    fault = kube.srv.lose_response(verb, nth=at)
    r = create(cli, kube, args)
    assert fault.hits == 1
    assert r.exit_code == ExitCode.CLUSTER, r.stderr
    assert "closed the connection without answering" in r.stderr and "Traceback" not in r.stderr
    assert "nothing was left on the cluster" in r.stderr, r.stderr
    assert left_on(kube.srv) == set()
    objects = [(resource, name) for _, resource, name in writes]
    resource, name = objects[nth - 1]
    if objects.index((resource, name)) == nth - 1:  # a create (not the JobSet's resume): named as stored
        assert "had been stored although the answer was lost" in r.stderr
        assert f"/{name}" in r.stderr.split("nothing was left on the cluster")[1]
    # every write of the job was deleted by name, newest first
    deleted = [(req.resource.split(".")[0], req.name) for req in kube.srv.requests_for("delete")]
    assert deleted == list(reversed(list(dict.fromkeys(objects[:nth]))))


@pytest.mark.parametrize(("scenario", "nth"), WRITES)
def test_a_server_gone_mid_create_names_what_may_be_left_and_how_to_remove_it(
    cli, kube, tmp_path, scenario, nth
) -> None:
    args, writes = scenario_args(scenario, tmp_path)
    verb, at = fault_at(writes, nth)
    kube.srv.go_away(verb, nth=at)
    r = create(cli, kube, args)
    assert r.exit_code == ExitCode.CLUSTER, r.stderr
    assert "Traceback" not in r.stderr
    job = args[args.index("--name") + 1]
    command = f"ktrain job delete {job} -n {NS}"
    match = re.search(r"these objects may be left in namespace team-a: (.*?); remove them once", r.stderr, re.DOTALL)
    assert match, r.stderr
    reported = {ref.strip() for ref in match.group(1).replace("\n", " ").split(",")}
    stored = left_on(kube.srv)
    assert stored and stored <= reported  # nothing left unreported
    assert len(reported) == len(dict.fromkeys((r, n) for _, r, n in writes[:nth]))  # and only what this run wrote
    assert f"`{command}`" in r.stderr
    # the cluster comes back: the command given removes everything
    kube.srv.clear_faults()
    kube.srv.start()
    again = cli(*command.split()[1:], *kube.args())
    assert again.exit_code == 0, again.stderr
    assert left_on(kube.srv) == set()


def test_interrupted_while_a_write_is_in_flight_rolls_it_back_too(cli, kube, monkeypatch) -> None:
    """Ctrl-C after the request left: the server may have stored it; the rollback deletes it by name."""
    from ktrain.cluster import client

    real = client.apply

    def apply(cluster: Any, obj: Any, dry_run: bool = False) -> Any:
        out = real(cluster, obj, dry_run=dry_run)
        if not dry_run and obj["kind"] == "Secret":
            raise KeyboardInterrupt  # the Secret was stored; its answer never reached the caller
        return out

    monkeypatch.setattr(client, "apply", apply)
    r = create(cli, kube, ["--runtime", "deepspeed-distributed", "--name", "ds"])
    assert r.exit_code == ExitCode.INTERRUPTED
    assert left_on(kube.srv) == set()


@pytest.mark.parametrize("scenario", ["mpi", "trainjob"])
def test_a_write_slower_than_the_request_timeout_is_named_as_possibly_stored(cli, kube, tmp_path, scenario) -> None:
    """Issue #25: the first write outlasts --request-timeout; the rollback's DELETE finds nothing
    (the server has not stored it yet) and the server stores it afterwards. A write whose answer
    never came is possibly stored: the message names it and the command that removes it."""
    import time

    args, writes = scenario_args(scenario, tmp_path)
    kube.srv.inject(verb="apply", nth=1, delay=2.0, dry_run=False)
    r = cli("job", "create", *kube.args(), *args, "--request-timeout", "1")
    assert r.exit_code == ExitCode.CLUSTER, r.stderr
    assert "did not answer within 1s" in r.stderr and "Traceback" not in r.stderr
    assert "nothing was left" not in r.stderr
    job = args[args.index("--name") + 1]
    name = writes[0][2]
    assert "may still be stored in namespace team-a" in r.stderr
    assert f"/{name} got no answer" in r.stderr
    assert f"`ktrain job delete {job} -n {NS}`" in r.stderr
    deadline = time.monotonic() + 10
    while not left_on(kube.srv) and time.monotonic() < deadline:  # the slow write lands
        time.sleep(0.05)
    assert {ref.split("/")[1] for ref in left_on(kube.srv)} == {name}
    again = cli("job", "delete", job, "-n", NS, "--yes", *kube.args())
    assert again.exit_code == 0, again.stderr
    assert left_on(kube.srv) == set()
