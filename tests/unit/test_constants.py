"""`ktrain.constants`, the package: the Kubernetes and Kubeflow Trainer strings the engine names once.
Where the Kubeflow SDK names the same string its value is the SDK's (they meet on the cluster: a label
ktrain writes is one the SDK reads), and the strings built from others agree with them."""

from __future__ import annotations

import subprocess
import sys

from kubeflow.trainer.constants import constants as sdk

from ktrain import constants as c

# ktrain's name -> the SDK's name of the same string
SAME_AS_THE_SDK = {
    "TRAINER_GROUP": "GROUP",
    "TRAINER_VERSION": "VERSION",
    "TRAINER_API_VERSION": "API_VERSION",
    "TRAINJOB_KIND": "TRAINJOB_KIND",
    "LABEL_ANCESTOR": "TRAINJOB_ANCESTOR_LABEL",
    "LABEL_FRAMEWORK": "RUNTIME_FRAMEWORK_LABEL",
    "JOBSET_NAME_LABEL": "JOBSET_NAME_LABEL",
    "JOBSET_RJOB_NAME_LABEL": "JOBSET_RJOB_NAME_LABEL",
    "JOB_COMPLETION_INDEX_ANNOTATION": "JOB_INDEX_LABEL",
    "NODE": "NODE",
    "LAUNCHER": "LAUNCHER",
    "DATASET_INITIALIZER": "DATASET_INITIALIZER",
    "MODEL_INITIALIZER": "MODEL_INITIALIZER",
    "ANCESTOR_DATASET_INITIALIZER": "DATASET_INITIALIZER",
    "ANCESTOR_MODEL_INITIALIZER": "MODEL_INITIALIZER",
}


def test_the_strings_the_sdk_names_too_have_the_sdks_values() -> None:
    for ours, theirs in SAME_AS_THE_SDK.items():
        assert getattr(c, ours) == getattr(sdk, theirs), ours


def test_the_api_versions_are_their_group_and_version() -> None:
    assert f"{c.TRAINER_GROUP}/{c.TRAINER_VERSION}" == c.TRAINER_API_VERSION
    assert c.JOBSET_API_VERSION.partition("/")[0] == c.JOBSET_GROUP
    assert c.JOBSET_NAME_LABEL.startswith("jobset.sigs.k8s.io/")  # JobSet labels pods under its old domain
    assert c.COSCHEDULING_POD_GROUP_LABEL.partition("/")[0] == c.COSCHEDULING_API_VERSION.partition("/")[0]


def test_the_kinds_and_steps_are_listed_once_each() -> None:
    assert c.RUNTIME_KINDS == ("TrainingRuntime", "ClusterTrainingRuntime")
    assert c.ANCESTORS == ("dataset-initializer", "model-initializer", "trainer")
    assert c.MANAGED_BY_VALUES == ("trainer.kubeflow.org/trainjob-controller", "kueue.x-k8s.io/multikueue")
    assert c.MANAGED_BY_TRAINER in c.MANAGED_BY_VALUES


def test_the_completion_index_field_path_is_the_downward_apis_reference_to_the_annotation() -> None:
    # what upstream's env JOB_COMPLETION_INDEX reads: metadata.annotations['batch.kubernetes.io/job-completion-index']
    assert c.COMPLETION_INDEX_FIELD_PATH == "metadata.annotations['batch.kubernetes.io/job-completion-index']"


def test_the_package_is_light_to_import() -> None:
    """It is on the render's path: no `typing` at run time, and the SDK-shaped module only when imported."""
    code = "import sys, ktrain.constants; print('typing' in sys.modules, 'ktrain.constants.constants' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]
