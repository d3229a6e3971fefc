"""JobSet's admission limits (ENGINE.md §11.4): the controller still builds such a JobSet, so a
render prints it with a warning; `job validate` and `job create` refuse it."""

from __future__ import annotations

import pytest

from ktrain.errors import ExitCode

pytestmark = pytest.mark.both_transports  # each test runs through both HTTP clients (conftest)

LONG = "a" * 50  # 50 + len("-node-0-0-") + 5 random characters > 63 for the pod names


def test_render_prints_the_jobset_and_warns_that_its_webhook_will_refuse_it(cli) -> None:
    r = cli("render", "--runtime", "torch-distributed", "--name", LONG, "-o", "name")
    assert r.exit_code == 0, r.stderr
    assert r.stdout == f"jobset.jobset.x-k8s.io/{LONG}\n"
    assert (
        "warning: the JobSet webhook will reject this JobSet: metadata.name: JobSet name is too long, "
        "pod names generated for this JobSet will exceed 63 characters" in r.stderr
    )


def test_validate_reports_the_long_name_as_an_error(cli) -> None:
    r = cli("job", "validate", "--runtime", "torch-distributed", "--name", LONG)
    assert r.exit_code == ExitCode.INVALID
    assert "JobSet is invalid" in r.stderr and "pod names generated for this JobSet will exceed 63" in r.stderr
    # one character less fits: 49 + 10 + 5 = 63 for a single-node job
    ok = cli("job", "validate", "--runtime", "torch-distributed", "--name", "a" * 48)
    assert ok.exit_code == 0, ok.stderr


def test_create_refuses_before_writing_anything(cli, kube) -> None:
    r = cli("job", "create", *kube.args(), "--runtime", "torch-distributed", "--name", LONG)
    assert r.exit_code == ExitCode.INVALID
    assert "JobSet name is too long" in r.stderr
    assert kube.srv.requests_for("apply", "jobsets") == []
    assert kube.srv.objects("jobsets", "team-a") == []


def test_depends_on_a_later_replicated_job_is_refused_by_validate(cli, tmp_path) -> None:
    runtime = tmp_path / "rt.yaml"
    runtime.write_text(
        "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: ClusterTrainingRuntime\nmetadata: {name: two-step}\n"
        "spec:\n  mlPolicy: {numNodes: 1}\n  template:\n    spec:\n      replicatedJobs:\n"
        "      - name: node\n        dependsOn: [{name: prep, status: Complete}]\n"
        "        template:\n          metadata:\n"
        "            labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}\n"
        "          spec:\n            template:\n              spec:\n"
        "                containers: [{name: node, image: busybox}]\n"
        "      - name: prep\n        template:\n          spec:\n            template:\n              spec:\n"
        "                containers: [{name: prep, image: busybox}]\n"
    )
    r = cli("job", "validate", "--runtime-file", str(runtime), "--runtime", "two-step", "--name", "j")
    assert r.exit_code == ExitCode.INVALID
    assert "DependsOn can't be set for the first ReplicatedJob" in r.stderr
