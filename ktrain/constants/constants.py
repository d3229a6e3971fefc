"""`from ktrain.constants import constants`: the Kubeflow SDK's public constants
(`kubeflow.trainer.constants.constants`, SDK 0.5), with its names and values, so
`constants.TRAINJOB_COMPLETE` or `constants.DATASET_INITIALIZER` in a notebook reads the same.

Not on the render's path (`ktrain.constants`, the package, is: it holds the engine's strings);
this module is loaded only when imported. Three values come from the environment, as the SDK
reads them: DEFAULT_PIP_INDEX_URLS, DEFAULT_MPI_USER_HOME, DEFAULT_TRAINING_RUNTIME. Left out on
purpose: the SDK's script templates (EXEC_FUNC_SCRIPT, DEFAULT_COMMAND, MPI_COMMAND,
TORCH_COMMAND), which ktrain does not run (docs/python-api.md, "The SDK's modules").
"""

from __future__ import annotations

import os

UNKNOWN = "Unknown"  # kubeflow.common.constants.UNKNOWN

GROUP = "trainer.kubeflow.org"
VERSION = "v1alpha1"
API_VERSION = f"{GROUP}/{VERSION}"
CLUSTER_TRAINING_RUNTIME_PLURAL = "clustertrainingruntimes"
TRAINING_RUNTIME_PLURAL = "trainingruntimes"
TRAINJOB_KIND = "TrainJob"
TRAINJOB_PLURAL = "trainjobs"

# The TrainJob statuses `get_job` and `wait_for_job_status` speak.
TRAINJOB_CREATED = "Created"
TRAINJOB_RUNNING = "Running"
TRAINJOB_COMPLETE = "Complete"
TRAINJOB_FAILED = "Failed"

POD_SUCCEEDED = "Succeeded"
POD_PENDING = "Pending"

TRAINJOB_ANCESTOR_LABEL = "trainer.kubeflow.org/trainjob-ancestor-step"
RUNTIME_FRAMEWORK_LABEL = "trainer.kubeflow.org/framework"

# Step names (`get_job_logs(step=...)`) and replicated jobs.
DATASET_INITIALIZER = "dataset-initializer"
MODEL_INITIALIZER = "model-initializer"
LAUNCHER = "launcher"
NODE = "node"

INITIALIZER_ENV_ACCESS_TOKEN = "ACCESS_TOKEN"
INITIALIZER_DEFAULT_IGNORE_PATTERNS = ["*.msgpack", "*.h5", "*.bin", "*.pt", "*.pth"]

WORKSPACE_PATH = "/workspace"
DATASET_PATH = os.path.join(WORKSPACE_PATH, "dataset")  # where the dataset initializer writes
MODEL_PATH = os.path.join(WORKSPACE_PATH, "model")  # where the model initializer writes

# Resource names a step's devices are read from.
CPU_LABEL = "cpu"
GPU_LABEL = "nvidia.com/gpu"
GPU_MIG_PREFIX = "nvidia.com/mig-"
TPU_LABEL = "google.com/tpu"
NPU_LABEL = "huawei.com/Ascend910"

JOBSET_NAME_LABEL = "jobset.sigs.k8s.io/jobset-name"
JOBSET_RJOB_NAME_LABEL = "jobset.sigs.k8s.io/replicatedjob-name"
JOB_INDEX_LABEL = "batch.kubernetes.io/job-completion-index"
POD_LABEL_SELECTOR = (
    f"{JOBSET_NAME_LABEL}={{trainjob_name}},{JOBSET_RJOB_NAME_LABEL} "
    f"in ({DATASET_INITIALIZER}, {MODEL_INITIALIZER}, {LAUNCHER}, {NODE})"
)

# The SDK reads these from the environment too: the first URL is pip's index, the rest extra indexes.
DEFAULT_PIP_INDEX_URLS = os.getenv("DEFAULT_PIP_INDEX_URLS", "https://pypi.org/simple").split(",")
DEFAULT_MPI_USER_HOME = os.getenv("DEFAULT_MPI_USER_HOME", "/home/mpiuser")
DEFAULT_TRAINING_RUNTIME = os.getenv("DEFAULT_TRAINING_RUNTIME", "torch-distributed")

TORCH_ENV_NUM_PROC_PER_NODE = "PET_NPROC_PER_NODE"
TORCH_TUNE_COMMAND = ("tune", "run")
TORCH_TUNE_INSTRUCT_DATASET = "torchtune.datasets.instruct_dataset"
DEFAULT_FRAMEWORK_IMAGES = {"torch": "pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime"}
JOB_NAME_UUID_LENGTH = 11  # a generated job name: a letter and 11 hex digits
