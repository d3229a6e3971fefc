"""`from ktrain.backends.kubernetes.utils import get_tpu_num_nodes, update_trainjob_status`, as from
`kubeflow.trainer.backends.kubernetes.utils` (SDK 0.5): the helpers the SDK exports from there."""

from ktrain.python_api.status_report import update_trainjob_status
from ktrain.python_api.tpu import get_tpu_num_nodes

__all__ = ["get_tpu_num_nodes", "update_trainjob_status"]
