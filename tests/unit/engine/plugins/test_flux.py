"""The Flux ML policy (`ktrain.engine.plugins.flux`, upstream `plugins/flux/flux.go`): a Flux broker
bootstrapped into every node pod by an init container and the entrypoint ConfigMap."""

from __future__ import annotations

from ktrain import constants as c
from ktrain.engine.plugins.flux import SETTING_DEFAULTS
from ktrain.errors import ValidationFailedError

from .renders import job, objects, of_kind, runtime

FLUX = {"flux": {"numProcPerNode": 2}}


def node_pod(found: list[dict[str, object]]) -> dict[str, object]:
    (jobset,) = of_kind(found, "JobSet")
    node = next(r for r in jobset["spec"]["replicatedJobs"] if r["name"] == c.NODE)  # type: ignore[index]
    return node["template"]["spec"]["template"]["spec"]  # type: ignore[no-any-return]


def test_flux_installs_the_broker_with_an_init_container_from_its_configmap() -> None:
    found = objects(job(numNodes=2, command=["python", "train.py"]), runtime(FLUX))
    pod = node_pod(found)
    (init,) = pod["initContainers"]  # type: ignore[misc]
    assert init["name"] == "flux-installer"
    assert init["command"] == ["/bin/bash", "/etc/flux-config/init.sh"]
    names = {o["metadata"]["name"] for o in of_kind(found, "ConfigMap")}
    assert "j-flux-entrypoint" in names


def test_flux_refuses_a_job_without_a_node_count() -> None:
    try:
        objects(job(image="x:1"), runtime(FLUX))
    except ValidationFailedError as exc:
        assert "spec.trainer.numNodes" in [e.path for e in exc.errors], exc.errors
    else:
        raise AssertionError("a Flux job without numNodes rendered")


def test_flux_refuses_fewer_than_one_task_per_node() -> None:
    try:
        objects(job(numNodes=1, numProcPerNode=0), runtime(FLUX))
    except ValidationFailedError as exc:
        assert "spec.trainer.numProcPerNode" in [e.path for e in exc.errors], exc.errors
    else:
        raise AssertionError("a Flux job with 0 tasks per node rendered")


def test_the_flux_view_image_comes_from_trainer_env_over_the_default() -> None:
    def init_image(**trainer: object) -> str:
        return str(node_pod(objects(job(numNodes=1, **trainer), runtime(FLUX)))["initContainers"][0]["image"])  # type: ignore[index]

    assert init_image() == SETTING_DEFAULTS["FLUX_VIEW_IMAGE"]
    assert init_image(env=[{"name": "FLUX_VIEW_IMAGE", "value": "my/view:1"}]) == "my/view:1"
