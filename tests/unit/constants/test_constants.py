"""`ktrain.constants.constants`, the Kubeflow SDK's constants module at its path: every constant the SDK
has (but the script templates docs/python-api.md lists as not provided) with the SDK's value."""

from __future__ import annotations

from kubeflow.trainer.constants import constants as theirs

from ktrain.constants import constants as ours

NOT_PROVIDED = {"EXEC_FUNC_SCRIPT", "DEFAULT_COMMAND", "MPI_COMMAND", "TORCH_COMMAND"}


def test_every_sdk_constant_has_the_sdks_value() -> None:
    names = {n for n, v in vars(theirs).items() if n.isupper() and not callable(v) and n != "TYPE_CHECKING"}
    assert len(names) > 30
    for name in sorted(names - NOT_PROVIDED):
        assert getattr(ours, name) == getattr(theirs, name), name
    assert not {n for n in NOT_PROVIDED if hasattr(ours, n)}


def test_the_statuses_the_notebooks_wait_for() -> None:
    assert (ours.TRAINJOB_CREATED, ours.TRAINJOB_RUNNING, ours.TRAINJOB_COMPLETE, ours.TRAINJOB_FAILED) == (
        "Created",
        "Running",
        "Complete",
        "Failed",
    )
    assert (ours.DATASET_INITIALIZER, ours.MODEL_INITIALIZER) == ("dataset-initializer", "model-initializer")
