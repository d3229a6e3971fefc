"""What the use cases take and give: the command line's job options, a render request, its outcomes."""

from __future__ import annotations

from ktrain.engine import RenderContext, RenderResult
from ktrain.inputs.documents import Document
from ktrain.inputs.registry import RuntimeEntry
from ktrain.util.structs import field, struct

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"

if TYPE_CHECKING:
    from ktrain.api.trainjob import TrainJob
    from ktrain.authoring.failure_policy import Checkpoint
    from ktrain.authoring.finetune import FineTuning
    from ktrain.inputs.code_bundle import CodeBundle
    from ktrain.util.jsondata import Obj


@struct
class JobOverrides:
    """What the command line says about the job (every field optional)."""

    runtime: str | None = None
    runtime_kind: str | None = None
    name: str | None = None
    namespace: str | None = None
    nodes: int | None = None
    nproc_per_node: int | None = None
    image: str | None = None
    command: list[str] | None = None
    env: list[tuple[str, str]] = field(default_factory=list)
    requests: dict[str, str] = field(default_factory=dict)
    limits: dict[str, str] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    dataset: str | None = None
    model: str | None = None
    dataset_secret: str | None = None
    model_secret: str | None = None
    queue: str | None = None
    suspend: bool | None = None
    patch_files: list[str] = field(default_factory=list)
    # `--values FILE` (template variables) and `--set PATH=VALUE` (job fields or template variables).
    values_files: list[str] = field(default_factory=list)
    sets: list[str] = field(default_factory=list)
    # Fine-tuning (torchtune runtimes), as the Kubeflow SDK's TorchTuneConfig: authoring/finetune.py.
    fine_tuning: FineTuning | None = None
    # Placement and queues: authoring/placement.py.
    node_selector: dict[str, str] = field(default_factory=dict)
    tolerations: list[Obj] = field(default_factory=list)
    gpus: int | None = None
    gpu_type: str | None = None
    gpu_type_label: str | None = None
    kueue_queue: str | None = None
    kueue_priority_class: str | None = None  # a Kueue WorkloadPriorityClass, not the pods' PriorityClass
    # Not expressible in a TrainJob: set on the rendered objects (authoring/scheduling.py).
    priority_class: str | None = None
    scheduler: str | None = None
    # Elastic torchrun (ktrain extension): authoring/elastic.py.
    elastic: tuple[int, int] | None = None
    max_restarts: int | None = None  # the JobSet's restart budget, any runtime (and torchrun's, with --elastic)
    # When a run fails or is preempted, and checkpoints (authoring/failure_policy.py).
    restart_on_preemption: bool | None = None
    fail_on_exit_codes: list[int] | None = None
    restart_strategy: str | None = None  # JobSet's spelling: Recreate | BlockingRecreate
    ttl_seconds: int | None = None
    checkpoint: Checkpoint | None = None
    # `--code PATH`, `--code-include PATTERN`, `--pip PKG`, `--pip-index-url URL`, `--requirements`: local code and
    # packages without building an image (inputs/code_bundle.py, authoring/code_launch.py).
    code: list[str] = field(default_factory=list)
    code_include: list[str] = field(default_factory=list)
    pip: list[str] = field(default_factory=list)
    pip_index_urls: list[str] = field(default_factory=list)
    # `--requirements FILE` (and `--pip "-r FILE"`): requirement files among the files sent.
    requirements: list[str] = field(default_factory=list)


@struct
class RenderRequest:
    file: str | None = None
    overrides: JobOverrides = field(default_factory=JobOverrides)
    ssh_secret: str | None = None
    allow_extensions: bool = False
    runtime_snapshot: bool = False
    # When neither -n nor the file names one: the kubeconfig context's namespace for `job create`.
    default_namespace: str = "default"
    # When neither --name nor the file names the job: this name (the Python API's submissions,
    # one per call, as the Kubeflow SDK names them); None derives one from the content (naming.py).
    fallback_name: str | None = None
    # The files of overrides.code, once read (job_document reads them on first use); the Python
    # API passes its own (ktrain.train's function).
    code_bundle: CodeBundle | None = None
    # The Python API's function: the file of `code_bundle` the trainer runs, under the resolved
    # runtime's launcher (torchrun, mpirun, python3: service/code.py, launcher_command).
    entry_file: str | None = None
    # Run `entry_file` as one process even on an MPI runtime (`mpirun -np 1`: the Python API's
    # `get_runtime_packages`, as the SDK's).
    single_process: bool = False
    # `--target trainjob`: a TrainJob without numNodes notes the node count the render gave it
    # (ktrain.io/nodes, for `job list`); off for a `TrainerClient.train` call with only the Kubeflow
    # SDK's arguments, which submits the SDK's TrainJob.
    note_nodes: bool = True
    # The job file's text when it does not come from a file (the Python API); `file` labels it.
    text: str | None = None
    # A TrainJob already parsed (an item of a KRM function's ResourceList): used as the job file's
    # document, never read as a template or a Training Operator v1 job; `file` labels it.
    document: Document | None = None
    # MPI without ssh_secret: instead of generating a key pair, refuse with this hint (a KRM
    # function's output must be the same on every build, and hold no private key).
    ssh_key_refusal: str | None = None
    # Warnings about the inputs found while reading them (e.g. a template value no variable uses):
    # they join the render's warnings.
    input_warnings: list[str] = field(default_factory=list)
    # The Trainer controller's feature gates (inputs/feature_gates.py) and, with TrainJobStatus, where
    # its status server listens (SERVICE.NAMESPACE:PORT; None: the defaults) and its CA (None: unknown).
    feature_gates: dict[str, bool] = field(default_factory=dict)
    status_server: str | None = None
    status_ca: str | None = None
    # Notes for stderr the render adds (a Training Operator v1 file converted in memory).
    notes: list[str] = field(default_factory=list)
    # --explain labels for the layers a converted v1 job supplied (see Conversion.source_labels).
    source_labels: dict[str, str] = field(default_factory=dict)


@struct
class RenderOutcome:
    job: TrainJob
    runtime: RuntimeEntry
    result: RenderResult
    document: Document | None = None
    secret_printed: bool = False
    ctx: RenderContext | None = None  # what the engine was given (--explain renders again with it)


@struct
class ValidateOutcome:
    job: TrainJob
    runtime: RuntimeEntry
    warnings: list[str]
