"""`ktrain.types.types`, the Kubeflow SDK's types module at its path: ktrain's types (one class each,
`ktrain.python_api.types`) under the SDK's names, and the SDK's TORCH_TUNE."""

from __future__ import annotations

import kubeflow.trainer.types.types as theirs

import ktrain.python_api.types as impl
import ktrain.types.types as ours


def test_the_sdks_names_are_ktrains_types() -> None:
    for name in ours.__all__:
        assert hasattr(theirs, name), name
        if name != "TORCH_TUNE":
            assert getattr(ours, name) is getattr(impl, name), name
    assert ours.TORCH_TUNE == theirs.TORCH_TUNE == "torchtune"
