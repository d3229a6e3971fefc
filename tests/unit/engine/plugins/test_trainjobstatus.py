"""TrainJobStatus (`ktrain.engine.plugins.trainjobstatus`, upstream trainjobstatus.go): what the
controller's feature gate adds, and that without it nothing changes."""

from __future__ import annotations

from ktrain import constants as c
from ktrain.engine.context import StatusServer
from ktrain.engine.plugins.trainjobstatus import (
    ENV_NAMES,
    TrainJobStatusPlugin,
    server_url,
    status_path,
    token_audience,
)

from .renders import container, env, job, objects, of_kind, runtime, step

GATE = StatusServer()


def test_upstreams_paths_and_audience() -> None:  # statusserver utils_test.go
    path = "trainer.kubeflow.org/v1alpha1/namespaces/default/trainjobs/mnist/status"
    assert status_path("default", "mnist") == f"/apis/{path}"
    assert token_audience("default", "mnist") == path
    assert server_url(GATE, "default", "test-job") == (
        "https://kubeflow-trainer-controller-manager.kubeflow-system.svc:10443"
        "/apis/trainer.kubeflow.org/v1alpha1/namespaces/default/trainjobs/test-job/status"
    )


def test_without_the_gate_nothing_is_added() -> None:
    found = objects(job(numNodes=1), runtime({"torch": {}}))
    assert [o["kind"] for o in found] == ["JobSet"]
    assert not set(ENV_NAMES) & set(env(container(found)))


def test_every_trainer_container_gets_the_variables_and_mount_and_the_pod_the_volume() -> None:
    trainer = step(c.NODE, c.ANCESTOR_TRAINER)
    pod = trainer["template"]["spec"]["template"]["spec"]
    pod["containers"].append({"name": "sidecar", "image": "s:1"})
    pod["initContainers"] = [{"name": "warm", "image": "w:1"}]
    other = step("helper", None)
    found = objects(job(numNodes=2), runtime({"torch": {}}, other, trainer), status_server=GATE)
    for name in (c.NODE, "sidecar"):
        ct = container(found, name=name)
        assert env(ct)["KUBEFLOW_TRAINER_SERVER_CA_CERT"] == "/var/run/secrets/kubeflow/trainer/ca.crt"
        assert env(ct)["KUBEFLOW_TRAINER_SERVER_TOKEN"] == "/var/run/secrets/kubeflow/trainer/token"
        mount = {"name": "kubeflow-trainer-token", "mountPath": "/var/run/secrets/kubeflow/trainer", "readOnly": True}
        assert mount in ct["volumeMounts"]
    assert list(env(container(found)))[-3:] == list(ENV_NAMES)  # after the ML policy's (torch's PET_*)
    (jobset,) = of_kind(found, "JobSet")
    rjobs = {r["name"]: r["template"]["spec"]["template"]["spec"] for r in jobset["spec"]["replicatedJobs"]}
    assert "volumes" not in rjobs["helper"] and "env" not in rjobs[c.NODE]["initContainers"][0]
    (volume,) = rjobs[c.NODE]["volumes"]
    sources = volume["projected"]["sources"]
    assert sources[0]["serviceAccountToken"] == {
        "audience": token_audience("ns", "j"),
        "expirationSeconds": 3600,
        "path": "token",
    }
    assert sources[1]["configMap"] == {"name": "j-tls-config", "items": [{"key": "ca.crt", "path": "ca.crt"}]}


def test_the_tls_config_map_holds_the_ca_it_is_given_and_is_owned_by_the_trainjob() -> None:
    pem = "-----BEGIN CERTIFICATE-----\nX\n-----END CERTIFICATE-----\n"
    found = objects(job(numNodes=1), runtime({}), status_server=StatusServer(ca_cert=pem))
    (config_map,) = of_kind(found, "ConfigMap")
    assert config_map["metadata"]["name"] == "j-tls-config" and config_map["data"] == {"ca.crt": pem}
    assert config_map["metadata"]["ownerReferences"][0]["kind"] == "TrainJob"


def test_a_runtime_without_a_trainer_step_still_gets_the_config_map() -> None:
    found = objects(job(numNodes=1), runtime({}, step("launcher", None)), status_server=GATE)
    assert [o["kind"] for o in found] == ["ConfigMap", "JobSet"]


def test_the_plugin_is_selected_by_the_gate_not_a_policy() -> None:
    assert TrainJobStatusPlugin.policy_key is None and TrainJobStatusPlugin.name == "TrainJobStatus"
