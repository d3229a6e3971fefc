"""`ktrain job delete` against the API-server double."""

from __future__ import annotations

import io
import sys

import pytest
from apiserver import owner_reference

pytestmark = pytest.mark.both_transports  # each test runs through both HTTP clients (conftest)

NS = "team-a"


def delete(cli, kube, *args: str):  # type: ignore[no-untyped-def]
    return cli("job", "delete", *kube.args(), *args)


def seed_job(srv, name: str, *, owner_kind: str = "JobSet", labels: dict | None = None) -> list[tuple[str, str]]:  # type: ignore[no-untyped-def]
    """A job as Trainer or ktrain leaves it: the owner plus every companion kind, owned by it.
    Stored with `put_object`, which (like a cluster without a garbage collector) keeps dependents
    of a deleted owner: `job delete` has to remove them by name."""
    meta = {"name": name, "namespace": NS, "labels": labels or {}}
    # the pods use their companions as the engine renders them: mounted keys, hostfile and Flux
    # files, a pod group (both schedulers' markers here, so that every kind is exercised)
    volumes = [
        {"name": "ssh", "secret": {"secretName": f"{name}-mpi-ssh-auth"}},
        {"name": "hostfile", "configMap": {"name": f"{name}-mpi-hostfile"}},
        {
            "name": "flux",
            "projected": {
                "sources": [
                    {"configMap": {"name": f"{name}-flux-entrypoint"}},
                    {"secret": {"name": f"{name}-flux-curve"}},
                ]
            },
        },
        {"name": "datasets", "configMap": {"name": "shared-datasets"}},  # not the job's own
    ]
    pod = {
        "metadata": {
            "labels": {"scheduling.x-k8s.io/pod-group": name},
            "annotations": {"scheduling.k8s.io/group-name": name},
        },
        "spec": {"containers": [{"name": "node", "image": "x"}], "volumes": volumes},
    }
    rjob = {
        "name": "node",
        "template": {
            "metadata": {"labels": {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}},
            "spec": {"template": pod},
        },
    }
    if owner_kind == "TrainJob":
        owner = srv.put_object(
            {
                "apiVersion": "trainer.kubeflow.org/v1alpha1",
                "kind": "TrainJob",
                "metadata": meta,
                "spec": {"runtimeRef": {"name": "torch-distributed"}},
            }
        )
    else:
        owner = srv.put_object(
            {
                "apiVersion": "jobset.x-k8s.io/v1alpha2",
                "kind": "JobSet",
                "metadata": meta,
                "spec": {"replicatedJobs": [rjob]},
            }
        )
    ref = owner_reference(owner)
    companions = [
        ("v1", "Secret", f"{name}-mpi-ssh-auth"),
        ("v1", "ConfigMap", f"{name}-mpi-hostfile"),
        ("v1", "ConfigMap", f"{name}-runtime-snapshot"),
        ("v1", "ConfigMap", f"{name}-flux-entrypoint"),
        ("v1", "Secret", f"{name}-flux-curve"),
        ("scheduling.x-k8s.io/v1alpha1", "PodGroup", name),
        ("scheduling.volcano.sh/v1beta1", "PodGroup", name),
    ]
    for api_version, kind, obj_name in companions:
        srv.put_object(
            {
                "apiVersion": api_version,
                "kind": kind,
                "metadata": {"name": obj_name, "namespace": NS, "ownerReferences": [ref]},
            }
        )
    return [(kind, obj_name) for _, kind, obj_name in companions]


def everything(srv) -> list[tuple[str, str]]:  # type: ignore[no-untyped-def]
    out = []
    for plural, group in (
        ("jobsets", None),
        ("trainjobs", None),
        ("configmaps", None),
        ("secrets", None),
        ("podgroups", "scheduling.x-k8s.io"),
        ("podgroups", "scheduling.volcano.sh"),
    ):
        out += [(plural, o["metadata"]["name"]) for o in srv.objects(plural, NS, group)]
    return sorted(out)


@pytest.fixture
def no_gc(kube):  # type: ignore[no-untyped-def]
    """Make the double behave like an API server without kube-controller-manager: deleting an
    owner leaves its dependents in place."""
    cluster = kube.srv.cluster
    original = cluster._delete_tree

    def delete_only(rt, obj, policy):  # type: ignore[no-untyped-def]
        cluster._remove(rt, obj)

    cluster._delete_tree = delete_only
    yield kube
    cluster._delete_tree = original


def test_delete_removes_the_jobset_and_every_companion_by_name(cli, no_gc) -> None:
    kube = no_gc
    seed_job(kube.srv, "ds")
    kube.srv.put_object({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "unrelated", "namespace": NS}})
    r = delete(cli, kube, "ds")
    assert r.exit_code == 0, r.stderr
    assert r.stdout.splitlines() == [
        'jobset.jobset.x-k8s.io "ds" deleted',
        'secret "ds-mpi-ssh-auth" deleted',
        'configmap "ds-mpi-hostfile" deleted',
        'configmap "ds-runtime-snapshot" deleted',
        'configmap "ds-flux-entrypoint" deleted',
        'secret "ds-flux-curve" deleted',
        'podgroup.scheduling.x-k8s.io "ds" deleted',
        'podgroup.scheduling.volcano.sh "ds" deleted',
    ]
    assert everything(kube.srv) == [("configmaps", "unrelated")]


def test_a_jobset_that_uses_no_companion_costs_one_look_up_for_them(cli, no_gc) -> None:
    """A torch job has no MPI, Flux or PodGroup objects: only its runtime snapshot is looked for,
    and the JobSet read to check it is not read again to delete it."""
    kube = no_gc
    kube.srv.put_object(
        {
            "apiVersion": "jobset.x-k8s.io/v1alpha2",
            "kind": "JobSet",
            "metadata": {"name": "plain", "namespace": NS, "annotations": {"ktrain.io/runtime": "torch-distributed"}},
            "spec": {"replicatedJobs": [{"name": "node", "template": {"spec": {"template": {"spec": {}}}}}]},
        }
    )
    kube.srv.put_object(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "shared-datasets", "namespace": NS}}
    )
    kube.srv.clear_requests()
    r = delete(cli, kube, "plain")
    assert r.exit_code == 0, r.stderr
    assert r.stdout.splitlines() == ['jobset.jobset.x-k8s.io "plain" deleted']
    asked = [(q.method, q.resource, q.name) for q in kube.srv.requests]
    assert asked == [
        ("GET", "trainjobs.trainer.kubeflow.org", "plain"),
        ("GET", "jobsets.jobset.x-k8s.io", "plain"),
        ("DELETE", "jobsets.jobset.x-k8s.io", "plain"),
        ("GET", "configmaps", "plain-runtime-snapshot"),
    ]


def test_delete_of_a_trainjob_removes_it_and_its_companions(cli, no_gc) -> None:
    kube = no_gc
    seed_job(kube.srv, "tj", owner_kind="TrainJob")
    r = delete(cli, kube, "tj", "--cascade", "foreground")
    assert r.exit_code == 0, r.stderr
    assert r.stdout.splitlines()[0] == 'trainjob.trainer.kubeflow.org "tj" deleted'
    assert everything(kube.srv) == []
    (first,) = [req for req in kube.srv.requests_for("delete") if req.name == "tj" and "trainjobs" in req.resource]
    assert first.json()["propagationPolicy"] == "Foreground"


def test_a_same_named_object_of_someone_else_is_kept(cli, no_gc) -> None:
    kube = no_gc
    seed_job(kube.srv, "a")
    kube.srv.put_object(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "b-mpi-hostfile", "namespace": NS}}
    )
    seed_job(kube.srv, "b")  # overwrites b-mpi-hostfile with an owned one...
    kube.srv.put_object(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "b-mpi-hostfile", "namespace": NS}}
    )
    r = delete(cli, kube, "b")  # ...which is now the user's own again
    assert r.exit_code == 0
    assert ("configmaps", "b-mpi-hostfile") in everything(kube.srv)


def test_orphan_keeps_the_companions(cli, no_gc) -> None:
    kube = no_gc
    companions = seed_job(kube.srv, "o")
    r = delete(cli, kube, "o", "--cascade", "orphan")
    assert r.exit_code == 0 and r.stdout == 'jobset.jobset.x-k8s.io "o" deleted\n'
    assert len(everything(kube.srv)) == len(companions)


def test_not_found_says_so_and_exits_4_after_deleting_the_others(cli, kube) -> None:
    seed_job(kube.srv, "real")
    r = delete(cli, kube, "real", "ghost")
    assert r.exit_code == 4
    assert "job ghost not found in namespace team-a" in r.stderr
    assert 'jobset.jobset.x-k8s.io "real" deleted' in r.stdout
    assert everything(kube.srv) == []


def test_selector_and_all_pick_trainer_shaped_jobs_only(cli, kube) -> None:
    seed_job(kube.srv, "a", labels={"team": "ml"})
    seed_job(kube.srv, "b", labels={"team": "ml"})
    seed_job(kube.srv, "c", labels={"team": "infra"})
    kube.srv.put_object(
        {
            "apiVersion": "jobset.x-k8s.io/v1alpha2",
            "kind": "JobSet",
            "metadata": {"name": "not-ours", "namespace": NS},
            "spec": {
                "replicatedJobs": [
                    {
                        "name": "w",
                        "template": {"spec": {"template": {"spec": {"containers": [{"name": "w", "image": "x"}]}}}},
                    }
                ]
            },
        }
    )
    r = delete(cli, kube, "-l", "team=ml")
    assert r.exit_code == 0, r.stderr
    assert sorted(n for p, n in everything(kube.srv) if p == "jobsets") == ["c", "not-ours"]
    r = delete(cli, kube, "--all")
    assert r.exit_code == 0
    assert [n for p, n in everything(kube.srv) if p == "jobsets"] == ["not-ours"]
    # by name too: a JobSet `job list` hides is refused unless --force (issue #19)
    r = delete(cli, kube, "not-ours")
    assert r.exit_code == 2
    assert "JobSet not-ours in namespace team-a is not a training job" in r.stderr and "--force" in r.stderr
    assert [n for p, n in everything(kube.srv) if p == "jobsets"] == ["not-ours"]
    r = delete(cli, kube, "not-ours", "--force")
    assert r.exit_code == 0, r.stderr
    assert everything(kube.srv) == []


def test_several_jobs_on_a_terminal_ask_first(kube, monkeypatch, capsys) -> None:
    from ktrain.cli import main

    seed_job(kube.srv, "a")
    seed_job(kube.srv, "b")

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr(sys, "stdin", Terminal("n\n"))
    assert main(["job", "delete", *kube.args(), "a", "b"]) == 1  # declined: not Ctrl-C's 130 (issue #19)
    assert "delete 2 jobs in namespace team-a (a, b)? [y/N]" in capsys.readouterr().err
    assert len(kube.srv.objects("jobsets", NS)) == 2
    monkeypatch.setattr(sys, "stdin", Terminal("y\n"))
    assert main(["job", "delete", *kube.args(), "a", "b"]) == 0
    assert kube.srv.objects("jobsets", NS) == []
    monkeypatch.setattr(sys, "stdin", Terminal(""))
    seed_job(kube.srv, "c")
    seed_job(kube.srv, "d")
    assert main(["job", "delete", *kube.args(), "--all", "--yes"]) == 0  # --yes: no question


def test_wait_returns_once_everything_is_gone(cli, kube) -> None:
    seed_job(kube.srv, "w")
    r = delete(cli, kube, "w", "--wait", "--timeout", "10s")
    assert r.exit_code == 0 and everything(kube.srv) == []


def test_names_and_selector_together_are_a_usage_error(cli, kube) -> None:
    assert delete(cli, kube).exit_code == 2
    r = delete(cli, kube, "a", "--all")
    assert r.exit_code == 2 and "not several of them" in r.stderr
