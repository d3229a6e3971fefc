"""`job create --checkpoint CLAIM`: a claim that does not exist is reported before anything is
created (create's pre-flight, ktrain/service/claims.py); one that exists is mounted."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.both_transports

NS = "team-a"
TYPES = ("configmaps", "secrets", "jobsets", "trainjobs")


def _stored(srv) -> list[str]:  # type: ignore[no-untyped-def]
    return [o["metadata"]["name"] for t in TYPES for o in srv.objects(t, NS)]


@pytest.mark.parametrize("target", ["jobset", "trainjob"])
def test_a_missing_claim_is_refused_before_any_write(cli, kube, target: str) -> None:  # type: ignore[no-untyped-def]
    argv = ["job", "create", *kube.args(), "--target", target, "-r", "torch-distributed", "--name", "ck"]
    r = cli(*argv, "--checkpoint", "nope:/ckpt", "--", "torchrun", "t.py")
    assert r.exit_code != 0
    assert "persistentvolumeclaim 'nope' not found in namespace team-a" in r.stderr
    assert "Traceback" not in r.stderr
    assert _stored(kube.srv) == []
    assert kube.srv.requests_for("apply", "jobsets") == [] and kube.srv.requests_for("apply", "trainjobs") == []


def test_an_existing_claim_is_mounted_in_every_trainer_pod(cli, kube) -> None:  # type: ignore[no-untyped-def]
    kube.srv.put_object(
        {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": "ckpt", "namespace": NS},
            "spec": {"accessModes": ["ReadWriteMany"], "resources": {"requests": {"storage": "1Gi"}}},
        }
    )
    r = cli("job", "create", *kube.args(), "-r", "torch-distributed", "--name", "ck", "--nodes", "2",
            "--checkpoint", "ckpt:/ckpt", "--max-restarts", "2", "--", "torchrun", "t.py")  # fmt: skip
    assert r.exit_code == 0, r.stderr
    jobset = kube.srv.get_object("jobsets", "ck", NS)
    pod = jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    assert {"name": "ktrain-checkpoint", "persistentVolumeClaim": {"claimName": "ckpt"}} in pod["volumes"]
    node = next(c for c in pod["containers"] if c["name"] == "node")
    assert {"name": "ktrain-checkpoint", "mountPath": "/ckpt"} in node["volumeMounts"]
    env = {e["name"]: e for e in node["env"]}
    assert env["KTRAIN_CHECKPOINT_DIR"]["value"] == "/ckpt"
    assert env["KTRAIN_RESTART_ATTEMPT"]["valueFrom"]["fieldRef"]["fieldPath"] == (
        "metadata.labels['jobset.sigs.k8s.io/restart-attempt']"
    )
    assert jobset["spec"]["failurePolicy"]["maxRestarts"] == 2
