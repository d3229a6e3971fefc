"""`ktrain-krm` in-process: the KRM functions protocol (a ResourceList in and out, results), the
exec-plugin protocol, and the options of its function configuration."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from ktrain.cli import krm

TORCH_JOB = {
    "apiVersion": "trainer.kubeflow.org/v1alpha1",
    "kind": "TrainJob",
    "metadata": {
        "name": "t1",
        "namespace": "ml",
        "labels": {"team": "vision"},
        "annotations": {
            "config.kubernetes.io/path": "jobs.yaml",
            "config.kubernetes.io/index": "1",
            "internal.config.kubernetes.io/path": "jobs.yaml",
            "internal.config.kubernetes.io/index": "1",
            "internal.config.kubernetes.io/id": "7",
            "config.k8s.io/id": "7",
        },
    },
    "spec": {
        "runtimeRef": {"name": "torch-distributed"},
        "trainer": {"numNodes": 2, "command": ["torchrun", "train.py"]},
    },
}


def at(path: str, index: int) -> dict[str, str]:
    return {
        "config.kubernetes.io/path": path,
        "config.kubernetes.io/index": str(index),
        "internal.config.kubernetes.io/path": path,
        "internal.config.kubernetes.io/index": str(index),
    }


def config_map(name: str, path: str, index: int) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "ml", "annotations": at(path, index)},
        "data": {"on": "yes", "n": "0777"},  # YAML 1.1 look-alikes must stay strings
    }


def resource_list(items: list[dict[str, Any]], config: dict[str, Any] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": items}
    if config is not None:
        out["functionConfig"] = config
    return out


def render_config(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "ktrain.io/v1alpha1", "kind": "KtrainRender", "metadata": {"name": "r"}, "spec": spec}


def run(rl: dict[str, Any], *, as_json: bool = False) -> tuple[dict[str, Any], int, str]:
    """`ktrain-krm` with `rl` on stdin: the ResourceList it wrote, its exit code, its stderr."""
    text = json.dumps(rl) if as_json else yaml.safe_dump(rl, sort_keys=False)
    out, err = io.StringIO(), io.StringIO()
    old = sys.stdin, sys.stdout, sys.stderr
    sys.stdin, sys.stdout, sys.stderr = io.StringIO(text), out, err
    try:
        code = krm.main([])
    finally:
        sys.stdin, sys.stdout, sys.stderr = old
    written = out.getvalue()
    if as_json:
        assert written.lstrip().startswith("{"), written
    return (yaml.safe_load(written) if written else {}), code, err.getvalue()


def by_kind(items: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [i for i in items if i["kind"] == kind]


def test_a_trainjob_becomes_its_objects_in_its_place_and_other_items_pass_through() -> None:
    before, after = config_map("before", "jobs.yaml", 0), config_map("after", "jobs.yaml", 2)
    other = config_map("elsewhere", "other.yaml", 0)
    out, code, err = run(resource_list([before, TORCH_JOB, after, other]))
    assert code == 0, err
    items = out["items"]
    assert [i["kind"] for i in items] == ["ConfigMap", "JobSet", "ConfigMap", "ConfigMap"]
    assert items[0] == before and items[3] == other  # untouched, strings still strings
    assert items[2]["data"] == {"on": "yes", "n": "0777"}
    jobset = items[1]
    assert (jobset["metadata"]["name"], jobset["metadata"]["namespace"]) == ("t1", "ml")
    pod = jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
    env = {e["name"]: e.get("value") for e in pod["spec"]["containers"][0]["env"]}
    assert env["PET_MASTER_ADDR"] == "t1-node-0-0.t1" and env["PET_NNODES"] == "2"
    # where the TrainJob came from, for kpt to write it back; each item of jobs.yaml keeps a
    # distinct index in output order; the orchestrator's identities are not copied
    annotations = [i["metadata"]["annotations"] for i in items[:3]]
    assert [a["config.kubernetes.io/index"] for a in annotations] == ["0", "1", "2"]
    assert [a["internal.config.kubernetes.io/index"] for a in annotations] == ["0", "1", "2"]
    assert annotations[1]["config.kubernetes.io/path"] == "jobs.yaml"
    assert "internal.config.kubernetes.io/id" not in annotations[1] and "config.k8s.io/id" not in annotations[1]
    # as `job create` submits it: the runtime recorded; the TrainJob's labels inherited
    assert annotations[1]["ktrain.io/runtime"] == "torch-distributed"
    assert jobset["metadata"]["labels"]["team"] == "vision"
    assert "results" not in out


def test_the_output_is_the_same_on_every_run_and_json_in_gives_json_out() -> None:
    first = run(resource_list([TORCH_JOB]))
    second = run(resource_list([TORCH_JOB]))
    assert first == second
    as_json, code, _ = run(resource_list([TORCH_JOB]), as_json=True)
    assert code == 0 and as_json["items"] == first[0]["items"]


def test_inherit_labels_false_renders_what_job_render_renders(cli: Any, tmp_path: Path) -> None:
    out, code, err = run(resource_list([TORCH_JOB], render_config(inheritLabels=False)))
    assert code == 0, err
    job_file = tmp_path / "t1.yaml"
    job = dict(TORCH_JOB)
    job["metadata"] = {"name": "t1", "namespace": "ml", "labels": {"team": "vision"}}
    job_file.write_text(yaml.safe_dump(job))
    rendered = cli("job", "render", "-f", str(job_file), "-o", "json")
    assert rendered.exit_code == 0, rendered.stderr
    expected = json.loads(rendered.stdout)
    got = out["items"][0]
    annotations = got["metadata"]["annotations"]
    for key in list(annotations):
        if key.startswith(("config.kubernetes.io/", "internal.config.kubernetes.io/", "ktrain.io/runtime")):
            del annotations[key]
    if not annotations:
        del got["metadata"]["annotations"]
    assert got == expected


def test_a_trainjob_without_a_namespace_renders_objects_without_one() -> None:
    job = json.loads(json.dumps(TORCH_JOB))
    del job["metadata"]["namespace"]
    out, code, err = run(resource_list([job]))
    assert code == 0, err
    assert "namespace" not in out["items"][0]["metadata"]


def test_a_bad_trainjob_fails_with_its_field_and_file_in_results_and_on_stderr() -> None:
    job = json.loads(json.dumps(TORCH_JOB))
    job["spec"]["trainer"]["numNodes"] = -3
    good = config_map("c", "jobs.yaml", 0)
    out, code, err = run(resource_list([good, job]))
    assert code == 1
    (result,) = out["results"]
    assert result["severity"] == "error"
    assert result["field"] == {"path": "spec.trainer.numNodes"}
    assert result["file"] == {"path": "jobs.yaml", "index": 1}
    assert result["resourceRef"] == {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "name": "t1",
        "namespace": "ml",
    }
    assert "numNodes" in result["message"]
    assert "error: jobs.yaml (TrainJob ml/t1):" in err and "numNodes" in err


def test_an_unknown_runtime_is_an_error_result() -> None:
    job = json.loads(json.dumps(TORCH_JOB))
    job["spec"]["runtimeRef"]["name"] = "no-such-runtime"
    out, code, _ = run(resource_list([job]))
    assert code == 1
    assert "no-such-runtime" in out["results"][0]["message"]


def test_mpi_without_ssh_secret_is_refused_and_names_the_option() -> None:
    job = json.loads(json.dumps(TORCH_JOB))
    job["spec"] = {"runtimeRef": {"name": "deepspeed-distributed"}, "trainer": {"numNodes": 2}}
    out, code, err = run(resource_list([job]))
    assert code == 1
    assert "sshSecret" in out["results"][0]["message"] and "sshSecret" in err
    assert not any(i["kind"] == "Secret" for i in out["items"])  # no key pair made


def test_mpi_with_ssh_secret_mounts_it_and_the_hostfile_names_the_job() -> None:
    job = json.loads(json.dumps(TORCH_JOB))
    job["spec"] = {"runtimeRef": {"name": "deepspeed-distributed"}, "trainer": {"numNodes": 2}}
    out, code, err = run(resource_list([job], render_config(sshSecret="keys")))
    assert code == 0, err
    (hostfile,) = by_kind(out["items"], "ConfigMap")
    assert hostfile["metadata"]["name"] == "t1-mpi-hostfile"
    hosts = [line.split()[0] for line in hostfile["data"]["hostfile"].splitlines()]
    assert hosts and all(h.startswith("t1-") and h.endswith(".t1") for h in hosts)
    assert not by_kind(out["items"], "Secret")
    assert "secretName: keys" in yaml.safe_dump(out["items"])


def test_generate_ssh_keys_is_an_explicit_choice() -> None:
    job = json.loads(json.dumps(TORCH_JOB))
    job["spec"] = {"runtimeRef": {"name": "deepspeed-distributed"}, "trainer": {"numNodes": 2}}
    out, code, err = run(resource_list([job], render_config(generateSshKeys=True)))
    assert code == 0, err
    (secret,) = by_kind(out["items"], "Secret")
    assert secret["type"] == "kubernetes.io/ssh-auth"


RUNTIME = {
    "apiVersion": "trainer.kubeflow.org/v1alpha1",
    "kind": "ClusterTrainingRuntime",
    # kustomize's `namespace:` puts one even on a cluster-scoped kind it does not know
    "metadata": {"name": "in-repo", "namespace": "ml", "annotations": at("runtime.yaml", 0)},
    "spec": {
        "mlPolicy": {"numNodes": 1, "torch": {}},
        "template": {
            "spec": {
                "replicatedJobs": [
                    {
                        "name": "node",
                        "template": {
                            "metadata": {"labels": {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}},
                            "spec": {"template": {"spec": {"containers": [{"name": "node", "image": "repo/img:1"}]}}},
                        },
                    }
                ]
            }
        },
    },
}


def in_repo_job() -> dict[str, Any]:
    job = json.loads(json.dumps(TORCH_JOB))
    job["spec"]["runtimeRef"]["name"] = "in-repo"
    return job


def test_a_runtime_among_the_items_is_used_and_dropped_for_the_jobset_target() -> None:
    out, code, err = run(resource_list([RUNTIME, in_repo_job()]))
    assert code == 0, err
    assert [i["kind"] for i in out["items"]] == ["JobSet"]
    assert "repo/img:1" in json.dumps(out["items"][0])


def test_keep_runtimes_keeps_it_without_the_namespace_kustomize_gave_it() -> None:
    out, code, err = run(resource_list([RUNTIME, in_repo_job()], render_config(keepRuntimes=True)))
    assert code == 0, err
    (runtime,) = by_kind(out["items"], "ClusterTrainingRuntime")
    assert "namespace" not in runtime["metadata"]
    assert runtime["metadata"]["name"] == "in-repo"


def test_target_trainjob_emits_the_trainjob_as_submitted_and_keeps_runtimes() -> None:
    out, code, err = run(resource_list([RUNTIME, in_repo_job()], render_config(target="trainjob")))
    assert code == 0, err
    kinds = [i["kind"] for i in out["items"]]
    assert kinds == ["ClusterTrainingRuntime", "TrainJob"]
    trainjob = out["items"][1]
    assert trainjob["spec"]["runtimeRef"]["name"] == "in-repo"
    assert trainjob["metadata"]["annotations"]["config.kubernetes.io/path"] == "jobs.yaml"
    assert "internal.config.kubernetes.io/id" not in trainjob["metadata"]["annotations"]


def test_a_training_runtime_serves_only_its_own_namespace() -> None:
    runtime = json.loads(json.dumps(RUNTIME))
    runtime["kind"] = "TrainingRuntime"
    runtime["metadata"]["namespace"] = "other"
    job = in_repo_job()
    job["spec"]["runtimeRef"]["kind"] = "TrainingRuntime"
    out, code, _ = run(resource_list([runtime, job]))
    assert code == 1 and "in-repo" in out["results"][0]["message"]
    runtime["metadata"]["namespace"] = "ml"
    out, code, err = run(resource_list([runtime, job]))
    assert code == 0, err


def test_code_paths_are_read_from_the_base_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "train.py").write_text("print('hi')\n")
    monkeypatch.chdir(tmp_path)
    config = render_config(code=[{"job": "t1", "paths": ["src"]}])
    out, code, err = run(resource_list([TORCH_JOB], config))
    assert code == 0, err
    maps = by_kind(out["items"], "ConfigMap")
    assert maps and all(m["metadata"]["name"].startswith("t1-code-") for m in maps)
    mounted = json.dumps(by_kind(out["items"], "JobSet")[0])
    assert all(m["metadata"]["name"] in mounted for m in maps)
    assert "print('hi')" in json.dumps(maps)
    # the same files, the same names: a rebuild changes nothing
    assert run(resource_list([TORCH_JOB], config))[0] == out


@pytest.mark.parametrize("given", ["../outside", "/etc"])
def test_code_paths_may_not_leave_the_base_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, given: str
) -> None:
    (tmp_path / "base").mkdir()
    (tmp_path / "outside").mkdir()
    monkeypatch.chdir(tmp_path / "base")
    out, code, _ = run(resource_list([TORCH_JOB], render_config(code=[{"job": "t1", "paths": [given]}])))
    assert code == 1
    assert "kustomization's directory" in out["results"][0]["message"]


@pytest.mark.parametrize(
    ("config", "field"),
    [
        (render_config(target="pods"), "spec.target"),
        (render_config(sshSecrets="x"), "spec.sshSecrets"),
        (render_config(keepRuntimes="yes"), "spec.keepRuntimes"),
        (render_config(code=[{"job": "t1"}]), "spec.code[0]"),
        ({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "x"}}, "kind"),
    ],
)
def test_a_bad_function_configuration_fails_naming_the_field(config: dict[str, Any], field: str) -> None:
    out, code, err = run(resource_list([TORCH_JOB], config))
    assert code == 1
    assert out["results"][0]["field"] == {"path": field}
    assert field in err


def test_kpt_style_configmap_options_are_strings() -> None:
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"target": "trainjob"}}
    out, code, err = run(resource_list([TORCH_JOB], config))
    assert code == 0, err
    assert [i["kind"] for i in out["items"]] == ["TrainJob"]


def test_stdin_that_is_not_a_resource_list_is_an_error() -> None:
    out, err = io.StringIO(), io.StringIO()
    old = sys.stdin, sys.stdout, sys.stderr
    sys.stdin, sys.stdout, sys.stderr = io.StringIO("kind: ConfigMap\n"), out, err
    try:
        code = krm.main([])
    finally:
        sys.stdin, sys.stdout, sys.stderr = old
    assert code != 0 and out.getvalue() == ""
    assert "no ResourceList" in err.getvalue()


def test_the_exec_plugin_protocol_reads_a_yaml_stream_and_its_config_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump(render_config(sshSecret="keys")))
    mpi = json.loads(json.dumps(TORCH_JOB))
    mpi["spec"] = {"runtimeRef": {"name": "deepspeed-distributed"}, "trainer": {"numNodes": 2}}
    stream = yaml.safe_dump_all([config_map("c", "x.yaml", 0), mpi])
    monkeypatch.setenv("KUSTOMIZE_PLUGIN_CONFIG_ROOT", str(tmp_path))
    out, err = io.StringIO(), io.StringIO()
    old = sys.stdin, sys.stdout, sys.stderr
    sys.stdin, sys.stdout, sys.stderr = io.StringIO(stream), out, err
    try:
        code = krm.main([str(config)])
    finally:
        sys.stdin, sys.stdout, sys.stderr = old
    assert code == 0, err.getvalue()
    docs = list(yaml.safe_load_all(out.getvalue()))
    assert [d["kind"] for d in docs] == ["ConfigMap", "ConfigMap", "JobSet"]
    assert "secretName: keys" in out.getvalue()


def test_help_names_both_protocols() -> None:
    out = io.StringIO()
    old = sys.stdout
    sys.stdout = out
    try:
        assert krm.main(["--help"]) == 0
    finally:
        sys.stdout = old
    assert "ResourceList" in out.getvalue() and "CONFIG_FILE" in out.getvalue()


def renamed(obj: dict[str, Any], new_name: str) -> dict[str, Any]:
    """`obj` as kustomize's namePrefix leaves it: renamed, its first name in its history."""
    out = json.loads(json.dumps(obj))
    old = out["metadata"]["name"]
    out["metadata"]["name"] = new_name
    out["metadata"].setdefault("annotations", {})[krm.PREVIOUS_NAMES] = f"{old},{old}"
    return out


def test_a_renamed_runtime_is_found_and_the_trainjob_points_at_its_new_name() -> None:
    runtime = renamed(RUNTIME, "team-in-repo")
    out, code, err = run(resource_list([runtime, in_repo_job()], render_config(target="trainjob")))
    assert code == 0, err
    kept, trainjob = out["items"]
    assert kept["metadata"]["name"] == trainjob["spec"]["runtimeRef"]["name"] == "team-in-repo"
    out, code, err = run(resource_list([runtime, in_repo_job()]))
    assert code == 0, err
    assert out["items"][0]["metadata"]["annotations"]["ktrain.io/runtime"] == "team-in-repo"


def test_ssh_secret_follows_the_secret_kustomize_renamed_in_the_same_namespace() -> None:
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "keys", "namespace": "ml"}, "data": {}}
    job = json.loads(json.dumps(TORCH_JOB))
    job["spec"] = {"runtimeRef": {"name": "deepspeed-distributed"}, "trainer": {"numNodes": 2}}
    out, code, err = run(resource_list([renamed(secret, "team-keys"), job], render_config(sshSecret="keys")))
    assert code == 0, err
    assert "secretName: team-keys" in yaml.safe_dump(out["items"])
    elsewhere = renamed(secret, "team-keys")
    elsewhere["metadata"]["namespace"] = "other"
    out, code, err = run(resource_list([elsewhere, job], render_config(sshSecret="keys")))
    assert code == 0, err
    assert "secretName: keys" in yaml.safe_dump(out["items"])


def test_code_for_a_trainjob_that_is_not_there_is_an_error() -> None:
    out, code, err = run(resource_list([TORCH_JOB], render_config(code=[{"job": "t2", "pip": ["x"]}])))
    assert code == 1
    assert out["results"][0]["field"] == {"path": "spec.code[0].job"} and "'t2'" in err


def test_feature_gates_turn_on_the_trainjobstatus_plugin_with_an_info_result() -> None:
    out, code, err = run(resource_list([TORCH_JOB], render_config(featureGates={"TrainJobStatus": True})))
    assert code == 0, err
    kinds = sorted(i["kind"] for i in out["items"])
    assert kinds == ["ConfigMap", "JobSet"]
    tls = by_kind(out["items"], "ConfigMap")[0]
    assert tls["metadata"]["name"] == "t1-tls-config" and tls["data"] == {"ca.crt": ""}
    infos = [r for r in out.get("results", []) if r["severity"] == "info"]
    assert len(infos) == 1 and "only the cluster knows" in infos[0]["message"]
    same, _, _ = run(resource_list([TORCH_JOB], render_config(featureGates="TrainJobStatus=true")))
    assert same["items"] == out["items"]
    off, _, _ = run(resource_list([TORCH_JOB], render_config(featureGates="TrainJobStatus=false")))
    assert [i["kind"] for i in off["items"]] == ["JobSet"]


def test_a_bad_feature_gate_names_its_field() -> None:
    _, code, err = run(resource_list([TORCH_JOB], render_config(featureGates="Nope=true")))
    assert code != 0
    assert "spec.featureGates" in err and "unrecognized feature gate: Nope" in err
