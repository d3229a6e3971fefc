"""Kubernetes and Kubeflow Trainer strings, named once.

Mirrors upstream `pkg/constants/constants.go` and the plugin constant files of
kubeflow/trainer v2.3.0 (see ENGINE.md §14.1). No environment reads here.
"""

from __future__ import annotations

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    from typing import Final

# --- API groups / versions / kinds ---------------------------------------------------------
TRAINER_GROUP = "trainer.kubeflow.org"
TRAINER_VERSION = "v1alpha1"
# TRAINER_GROUP/TRAINER_VERSION spelled out and Final: type checkers see the literal that the API
# models' `api_version: Literal[...]` fields take as their default.
TRAINER_API_VERSION: Final = "trainer.kubeflow.org/v1alpha1"
TRAINJOB_KIND = "TrainJob"
TRAINING_RUNTIME_KIND = "TrainingRuntime"
CLUSTER_TRAINING_RUNTIME_KIND = "ClusterTrainingRuntime"
RUNTIME_KINDS = (TRAINING_RUNTIME_KIND, CLUSTER_TRAINING_RUNTIME_KIND)

JOBSET_GROUP = "jobset.x-k8s.io"
JOBSET_API_VERSION = "jobset.x-k8s.io/v1alpha2"
JOBSET_KIND = "JobSet"
COSCHEDULING_API_VERSION = "scheduling.x-k8s.io/v1alpha1"
VOLCANO_API_VERSION = "scheduling.volcano.sh/v1beta1"
PODGROUP_KIND = "PodGroup"

# --- labels / annotations ---------------------------------------------------------------------
LABEL_ANCESTOR = "trainer.kubeflow.org/trainjob-ancestor-step"
LABEL_FRAMEWORK = "trainer.kubeflow.org/framework"
LABEL_SUPPORT = "trainer.kubeflow.org/support"
SUPPORT_DEPRECATED = "deprecated"
LABEL_WEBHOOK_VALIDATION = "trainer.kubeflow.org/webhook-validation"
WEBHOOK_VALIDATION_DISABLED = "disabled"

ANCESTOR_TRAINER = "trainer"
ANCESTOR_DATASET_INITIALIZER = "dataset-initializer"
ANCESTOR_MODEL_INITIALIZER = "model-initializer"
ANCESTORS = (ANCESTOR_DATASET_INITIALIZER, ANCESTOR_MODEL_INITIALIZER, ANCESTOR_TRAINER)

COSCHEDULING_POD_GROUP_LABEL = "scheduling.x-k8s.io/pod-group"
VOLCANO_GROUP_NAME_ANNOTATION = "scheduling.k8s.io/group-name"
VOLCANO_QUEUE_ANNOTATION = "scheduling.volcano.sh/queue-name"
# Queues and priority other schedulers read from an object's labels (--kueue-queue, --scheduler kai).
KUEUE_QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
KUEUE_PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"  # a Kueue WorkloadPriorityClass
# The Kueue API versions ktrain reads (Workloads, LocalQueues), the one every release serves first.
KUEUE_API_VERSIONS = ("kueue.x-k8s.io/v1beta1", "kueue.x-k8s.io/v1beta2")
KAI_QUEUE_LABEL = "kai.scheduler/queue"
# --code: the digest of the files, a label on their ConfigMaps and an annotation on the TrainJob/JobSet.
CODE_DIGEST_KEY = "ktrain.io/code"

JOBSET_NAME_LABEL = "jobset.sigs.k8s.io/jobset-name"
JOBSET_RJOB_NAME_LABEL = "jobset.sigs.k8s.io/replicatedjob-name"
JOBSET_JOB_INDEX_LABEL = "jobset.sigs.k8s.io/job-index"
JOBSET_JOB_KEY_LABEL = "jobset.sigs.k8s.io/job-key"  # a hash of the Job's namespaced name
# JobSet exclusive placement (api/jobset/v1alpha2 ExclusiveKey): one Job per domain of this topology key
JOBSET_EXCLUSIVE_ANNOTATION = "alpha.jobset.sigs.k8s.io/exclusive-topology"
JOB_COMPLETION_INDEX_ANNOTATION = "batch.kubernetes.io/job-completion-index"

# --- names --------------------------------------------------------------------------------------
NODE = "node"  # trainer container and trainer rJob name
LAUNCHER = "launcher"
DATASET_INITIALIZER = "dataset-initializer"
MODEL_INITIALIZER = "model-initializer"
INITIALIZER_VOLUME = "initializer"
INITIALIZER_ENV_STORAGE_URI = "STORAGE_URI"

CONTAINER_TRAINER_PORT = 29500
COMPLETION_INDEX_FIELD_PATH = f"metadata.annotations['{JOB_COMPLETION_INDEX_ANNOTATION}']"

MANAGED_BY_TRAINER = "trainer.kubeflow.org/trainjob-controller"
MANAGED_BY_MULTIKUEUE = "kueue.x-k8s.io/multikueue"
MANAGED_BY_VALUES = (MANAGED_BY_TRAINER, MANAGED_BY_MULTIKUEUE)

RUNTIME_SNAPSHOT_SUFFIX = "-runtime-snapshot"
FIELD_MANAGER = "ktrain"
DEFAULT_PATCH_MANAGER = "ktrain.io/cli"
# On a JobSet that `ktrain job create` submitted: the runtime it was rendered from (for `job list`).
RUNTIME_ANNOTATION = "ktrain.io/runtime"
# On a TrainJob ktrain submits: how many nodes the render gave it (`job list` NODES before a JobSet exists).
NODES_ANNOTATION = "ktrain.io/nodes"

DEPRECATION_POLICY_URL = (
    "https://trainer.kubeflow.org/en/latest/operator-guides/runtime.html#runtime-deprecation-policy"
)
