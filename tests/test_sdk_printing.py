"""What `TrainerClient` returns prints as the Kubeflow SDK's (issue #36): the same cluster read by the
SDK and by ktrain through the API-server double gives equal reprs (device counts, creation times
with the SDK's tzinfo); a TrainJob with only the SDK's arguments carries no ktrain annotation; a
DataCacheInitializer sends the SDK's environment and, on upstream's data-cache runtime, is refused
with the Trainer webhook's message."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from apiserver import ApiServerDouble
from conftest import SHARED

import ktrain
from ktrain import constants as c
from ktrain.errors import ValidationFailedError

REPO = Path(__file__).resolve().parents[1]
NS = "team-a"
pytestmark = pytest.mark.double


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ApiServerDouble, str]]:
    with ApiServerDouble() as srv:
        srv.add_namespace(NS)
        for name in ("torch-distributed", "torchtune-llama3.2-1b", "deepspeed-distributed"):
            srv.put_object(yaml.safe_load((REPO / "runtimes" / f"{name}.yaml").read_text()))
        yield srv, str(srv.write_kubeconfig(tmp_path_factory.mktemp("kube") / "kubeconfig", namespace=NS))


def _sdk_client(kubeconfig: str) -> Any:
    from kubeflow.trainer import KubernetesBackendConfig, TrainerClient

    return TrainerClient(KubernetesBackendConfig(config_file=kubeconfig, namespace=NS))


def test_list_runtimes_prints_as_the_sdks(cluster: tuple[ApiServerDouble, str]) -> None:
    _srv, kubeconfig = cluster
    theirs = [repr(r) for r in _sdk_client(kubeconfig).list_runtimes()]
    ours = [
        repr(r) for r in ktrain.TrainerClient(ktrain.KubernetesBackendConfig(config_file=kubeconfig)).list_runtimes()
    ]
    assert ours == theirs
    assert any("device_count='2.0'" in r for r in ours)  # torchtune's `nvidia.com/gpu: 2`


def test_a_jobs_creation_time_has_the_sdks_tzinfo(cluster: tuple[ApiServerDouble, str]) -> None:
    _srv, kubeconfig = cluster
    client = ktrain.TrainerClient(ktrain.KubernetesBackendConfig(config_file=kubeconfig))
    name = client.train(trainer=ktrain.CustomTrainerContainer(image="busybox"))
    ours = client.get_job(name).creation_timestamp
    theirs = _sdk_client(kubeconfig).get_job(name).creation_timestamp
    assert (repr(ours), type(ours.tzinfo)) == (repr(theirs), type(theirs.tzinfo))
    client.delete_job(name)


def test_only_a_call_with_options_notes_the_node_count(cluster: tuple[ApiServerDouble, str]) -> None:
    srv, kubeconfig = cluster
    client = ktrain.TrainerClient(ktrain.KubernetesBackendConfig(config_file=kubeconfig))
    tune = ktrain.BuiltinTrainer(config=ktrain.TorchTuneConfig())
    plain = client.train(runtime="torchtune-llama3.2-1b", trainer=tune)
    with_nodes = client.train(
        runtime="torchtune-llama3.2-1b", trainer=ktrain.BuiltinTrainer(ktrain.TorchTuneConfig(num_nodes=1))
    )
    labelled = client.train(runtime="torchtune-llama3.2-1b", trainer=tune, options=[ktrain.options.Labels({"a": "b"})])
    annotations = {
        name: (srv.get_object("trainjobs", name, NS)["metadata"].get("annotations") or {})
        for name in (plain, with_nodes, labelled)
    }
    assert c.NODES_ANNOTATION not in annotations[plain]  # the SDK's TrainJob, as the SDK sends it
    assert c.NODES_ANNOTATION not in annotations[with_nodes]
    assert annotations[labelled][c.NODES_ANNOTATION] == "1"
    assert client.get_job(plain).num_nodes == 1  # read from the runtime instead
    for name in (plain, with_nodes, labelled):
        client.delete_job(name)


def test_a_data_cache_initializer_sends_the_sdks_env() -> None:
    from kubeflow.trainer import DataCacheInitializer as Theirs
    from kubeflow.trainer.backends.kubernetes.utils import get_dataset_initializer

    from ktrain.python_api.conversion import initializer_parts

    fields = {"storage_uri": "cache://s/t", "metadata_loc": "s3://b/m.json", "num_data_nodes": 4, "iam_role": "r"}
    sdk = get_dataset_initializer(Theirs(**fields)).to_dict()
    keywords, spec = initializer_parts(ktrain.Initializer(dataset=ktrain.DataCacheInitializer(**fields)))
    assert keywords == {"dataset": sdk["storageUri"]}
    assert spec["dataset"]["env"] == sdk["env"]


@pytest.mark.shared
def test_upstreams_data_cache_runtime_refuses_it_with_the_webhooks_message() -> None:
    from conftest import need_shared

    need_shared()
    runtime = SHARED / "reference" / "upstream" / "trainer" / "runtimes" / "torch_distributed_with_cache.yaml"
    cache = ktrain.DataCacheInitializer(storage_uri="cache://s/t", metadata_loc="s3://b/m.json", num_data_nodes=4)
    with pytest.raises(ValidationFailedError) as err:
        _train_offline(cache, runtime)
    assert (
        "spec.runtimeRef: must have volumeMount with name - initializer in container dataset-initializer "
        "of the dataset-initializer job"
    ) in str(err.value)


def _train_offline(cache: Any, runtime: Path) -> None:
    """What `TrainerClient().train` renders before it submits (no cluster)."""
    from ktrain.python_api import conversion
    from ktrain.python_api.request import prepare
    from ktrain.service.render import render_request

    keywords, spec = conversion.initializer_parts(ktrain.Initializer(dataset=cache))
    job = {"apiVersion": c.TRAINER_API_VERSION, "kind": c.TRAINJOB_KIND, "spec": {"initializer": spec}}
    options = {"runtime": "torch-distributed-with-cache", "runtime_files": [str(runtime)], **keywords}
    request, registry = prepare(job, options, function="train")
    render_request(request, registry)
