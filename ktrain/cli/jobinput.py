"""`JobInput`: the options that describe a job, shared by every command that builds one.

`job render`, `job validate` and `job create` take the same inputs: a job file and/or flags.
Rather than repeat thirty parameters per command, a command takes one `job_input: JobInput`
parameter; each field below is one option, declared as a command's own parameters are
(`ktrain.cli.spec`). The typer app (`ktrain.cli.typer_app`) expands the parameter into these options
(the trainer command first, then the command's own options, then the rest), and the fast path
(`ktrain.cli.fastpath`) builds the very same value; this module never imports typer.
"""

from __future__ import annotations

import os

from ktrain.cli.common import connection, parse_pairs, registry_from
from ktrain.cli.spec import Argument, Option
from ktrain.util.structs import struct

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    from typing import Annotated, Any


@struct
class JobInput:
    """What the user said about the job, as given on the command line (None: not given)."""

    command: Annotated[list[str] | None, Argument(help="Trainer command, after --.", show_default=False)] = None
    filename: Annotated[
        str | None,
        Option("-f", "--filename", help="TrainJob file, or a Training Operator v1 job (YAML; - for stdin)."),
    ] = None
    values: Annotated[
        list[str] | None, Option("--values", help="Values file for a job template (YAML; repeatable).")
    ] = None
    sets: Annotated[
        list[str] | None,
        Option(
            "--set",
            help="PATH=VALUE: set a job field (trainer.numNodes=4, trainer.env[name=LR].value=1e-4) "
            "or a template value (lr=3e-4). Repeatable.",
        ),
    ] = None
    runtime: Annotated[str | None, Option("--runtime", "-r", help="Runtime blueprint name.")] = None
    runtime_kind: Annotated[
        str | None,
        Option(
            "--runtime-kind",
            help="ClusterTrainingRuntime | TrainingRuntime: the kind of --runtime "
            "(default: whichever holds the name; a job file's runtimeRef.kind without --runtime).",
        ),
    ] = None
    runtime_file: Annotated[
        list[str] | None,
        Option("--runtime-file", help="A runtime YAML file (highest precedence; repeatable)."),
    ] = None
    runtimes_dir: Annotated[
        list[str] | None, Option("--runtimes-dir", help="A directory of runtime YAML files (repeatable).")
    ] = None
    name: Annotated[str | None, Option("--name", help="TrainJob name (default: derived from content).")] = None
    namespace: Annotated[str | None, Option("-n", "--namespace", help="Namespace.")] = None
    nodes: Annotated[int | None, Option("--nodes", help="Number of training nodes.")] = None
    nproc_per_node: Annotated[int | None, Option("--nproc-per-node", help="Processes per node.")] = None
    image: Annotated[str | None, Option("--image", help="Trainer image.")] = None
    env: Annotated[list[str] | None, Option("--env", "-e", help="Trainer env KEY=VALUE (repeatable).")] = None
    resource: Annotated[
        list[str] | None, Option("--resource", help="Per-node resource limit NAME=QTY (repeatable).")
    ] = None
    cpu: Annotated[str | None, Option("--cpu", help="Per-node CPU request.")] = None
    memory: Annotated[str | None, Option("--memory", help="Per-node memory request.")] = None
    label: Annotated[list[str] | None, Option("--label", "-l", help="JobSet label KEY=VALUE.")] = None
    annotation: Annotated[list[str] | None, Option("--annotation", help="JobSet annotation KEY=VALUE.")] = None
    dataset: Annotated[str | None, Option("--dataset", help="Dataset storage URI (hf://, s3://, ...).")] = None
    model: Annotated[str | None, Option("--model", help="Model storage URI.")] = None
    dataset_secret: Annotated[str | None, Option("--dataset-secret", help="Secret with dataset credentials.")] = None
    model_secret: Annotated[str | None, Option("--model-secret", help="Secret with model credentials.")] = None
    queue: Annotated[
        str | None,
        Option("--queue", help="Volcano queue (through a runtime patch); with --scheduler kai, the KAI queue."),
    ] = None
    kueue_queue: Annotated[
        str | None,
        Option("--kueue-queue", help="Kueue LocalQueue (label kueue.x-k8s.io/queue-name); Kueue resumes it."),
    ] = None
    kueue_priority_class: Annotated[
        str | None,
        Option(
            "--kueue-priority-class",
            help="Kueue WorkloadPriorityClass (label kueue.x-k8s.io/priority-class); the queueing priority.",
        ),
    ] = None
    priority_class: Annotated[
        str | None,
        Option("--priority-class", help="Pod PriorityClass (also the Volcano PodGroup's); not with --target trainjob."),
    ] = None
    scheduler: Annotated[
        str | None, Option("--scheduler", help="default | kai (NVIDIA KAI Scheduler; needs --allow-extensions).")
    ] = None
    node_selector: Annotated[
        list[str] | None, Option("--node-selector", help="Pod node selector KEY=VALUE, every step (repeatable).")
    ] = None
    toleration: Annotated[
        list[str] | None,
        Option("--toleration", help="Pod toleration KEY[=VALUE][:EFFECT], kubectl's taint syntax (repeatable)."),
    ] = None
    gpus: Annotated[
        int | None, Option("--gpus", help="GPUs per node (the runtime's GPU resource, else nvidia.com/gpu).", min=0)
    ] = None
    gpu_type: Annotated[
        str | None, Option("--gpu-type", help="GPU model for the trainer: node label --gpu-type-label=TYPE.")
    ] = None
    gpu_type_label: Annotated[
        str | None,
        Option(
            "--gpu-type-label",
            help="Node label naming the GPU model (default: $KTRAIN_GPU_TYPE_LABEL, else nvidia.com/gpu.product).",
        ),
    ] = None
    elastic: Annotated[
        str | None, Option("--elastic", help="MIN:MAX elastic torchrun nodes (ktrain extension; --allow-extensions).")
    ] = None
    max_restarts: Annotated[
        int | None,
        Option("--max-restarts", help="Restart the whole job up to N times when it fails (JobSet maxRestarts).", min=0),
    ] = None
    restart_on_preemption: Annotated[
        bool | None,
        Option(
            "--restart-on-preemption/--no-restart-on-preemption",
            help="A preempted, evicted or drained pod restarts the job without using up --max-restarts.",
        ),
    ] = None
    fail_on_exit_code: Annotated[
        str | None,
        Option("--fail-on-exit-code", help="CODES (2 or 2,42): these exit codes fail the job at once, no restart."),
    ] = None
    restart_strategy: Annotated[
        str | None, Option("--restart-strategy", help="recreate | blocking-recreate: how JobSet restarts the job.")
    ] = None
    ttl: Annotated[
        str | None, Option("--ttl", help="Delete the finished job after this long (3600, 30m, 12h, 7d).")
    ] = None
    checkpoint: Annotated[
        str | None,
        Option(
            "--checkpoint",
            help="CLAIM[:PATH]: mount this PersistentVolumeClaim in every trainer pod (default /checkpoints), "
            "with KTRAIN_CHECKPOINT_DIR and KTRAIN_RESTART_ATTEMPT.",
        ),
    ] = None
    epochs: Annotated[int | None, Option("--epochs", help="Fine-tuning (torchtune): epochs.", min=1)] = None
    batch_size: Annotated[int | None, Option("--batch-size", help="Fine-tuning: batch size.", min=1)] = None
    dtype: Annotated[str | None, Option("--dtype", help="Fine-tuning: bf16 | fp32.")] = None
    loss: Annotated[str | None, Option("--loss", help="Fine-tuning: loss (CEWithChunkedOutputLoss).")] = None
    lora: Annotated[
        str | None,
        Option(
            "--lora", help="Fine-tuning with LoRA: rank=,alpha=,dropout=,modules=q_proj,v_proj,mlp,output (or default)."
        ),
    ] = None
    qlora: Annotated[str | None, Option("--qlora", help="Fine-tuning with QLoRA (quantized base): as --lora.")] = None
    dora: Annotated[str | None, Option("--dora", help="Fine-tuning with DoRA: as --lora.")] = None
    dataset_source: Annotated[
        str | None,
        Option("--dataset-source", help="Fine-tuning dataset format: json | csv | parquet | arrow | text | xml."),
    ] = None
    dataset_split: Annotated[
        str | None, Option("--dataset-split", help="Fine-tuning dataset split, e.g. train[:10%].")
    ] = None
    dataset_column_map: Annotated[
        str | None, Option("--dataset-column-map", help="Fine-tuning dataset columns: input=COL,output=COL.")
    ] = None
    train_on_input: Annotated[
        bool | None, Option("--train-on-input/--no-train-on-input", help="Fine-tuning: train on the prompt too.")
    ] = None
    system_prompt: Annotated[str | None, Option("--system-prompt", help="Fine-tuning: a system prompt to prepend.")] = (
        None
    )
    code: Annotated[
        list[str] | None,
        Option("--code", help="Local file or directory sent with the job and run from (repeatable; see README)."),
    ] = None
    code_include: Annotated[
        list[str] | None, Option("--code-include", help="Send files matching this pattern even if they look secret.")
    ] = None
    pip: Annotated[
        list[str] | None,
        Option("--pip", help="Python package to install before the command (repeatable; '-r FILE': requirements)."),
    ] = None
    requirements: Annotated[
        list[str] | None,
        Option(
            "--requirements",
            help="A requirements file among the --code files, installed before the command (repeatable).",
        ),
    ] = None
    pip_index_url: Annotated[
        list[str] | None,
        Option("--pip-index-url", help="Package index for --pip (repeatable; the first is the index)."),
    ] = None
    patch: Annotated[list[str] | None, Option("--patch", help="A runtimePatch YAML file (repeatable).")] = None
    suspend: Annotated[bool | None, Option("--suspend/--no-suspend", help="Create suspended.")] = None
    ssh_secret: Annotated[
        str | None, Option("--ssh-secret", help="MPI: mount this existing Secret instead of new keys.")
    ] = None
    allow_extensions: Annotated[
        bool, Option("--allow-extensions", help="Allow ktrain extensions (Intel MPI / MPICH hostfiles).")
    ] = False
    feature_gates: Annotated[
        str | None,
        Option(
            "--feature-gates",
            help="The Trainer controller's feature gates, e.g. TrainJobStatus=true (default: $KTRAIN_FEATURE_GATES).",
        ),
    ] = None
    status_server: Annotated[
        str | None,
        Option(
            "--status-server",
            help="TrainJobStatus: SERVICE.NAMESPACE:PORT of the controller's status server "
            "(default: $KTRAIN_STATUS_SERVER, else the controller's defaults: "
            "kubeflow-trainer-controller-manager, kubeflow-system, 10443).",
        ),
    ] = None
    kubeconfig: Annotated[
        str | None,
        Option(
            "--kubeconfig",
            help="Kubeconfig file(s) (default: $KUBECONFIG, ~/.kube/config); "
            "render: also take --runtime from this cluster.",
        ),
    ] = None
    context: Annotated[str | None, Option("--context", help="The kubeconfig context to use.")] = None

    def overrides(self) -> Any:
        """The flags as a `service.JobOverrides`."""
        from ktrain.service.requests import JobOverrides

        requests: dict[str, str] = {}
        if self.cpu is not None:
            requests["cpu"] = self.cpu
        if self.memory is not None:
            requests["memory"] = self.memory
        return JobOverrides(
            runtime=self.runtime,
            runtime_kind=self.runtime_kind,
            name=self.name,
            namespace=self.namespace,
            nodes=self.nodes,
            nproc_per_node=self.nproc_per_node,
            image=self.image,
            command=list(self.command) if self.command else None,
            env=parse_pairs(self.env, "--env"),
            requests=requests,
            limits=dict(parse_pairs(self.resource, "--resource")),
            labels=dict(parse_pairs(self.label, "--label")),
            annotations=dict(parse_pairs(self.annotation, "--annotation")),
            dataset=self.dataset,
            model=self.model,
            dataset_secret=self.dataset_secret,
            model_secret=self.model_secret,
            queue=self.queue,
            suspend=self.suspend,
            patch_files=list(self.patch or []),
            values_files=list(self.values or []),
            sets=list(self.sets or []),
            fine_tuning=self._fine_tuning(),
            node_selector=self._node_selector(),
            tolerations=self._tolerations(),
            gpus=self.gpus,
            gpu_type=self.gpu_type,
            gpu_type_label=self.gpu_type_label or os.environ.get("KTRAIN_GPU_TYPE_LABEL") or None,
            kueue_queue=self.kueue_queue,
            kueue_priority_class=self.kueue_priority_class,
            priority_class=self.priority_class,
            scheduler=self.scheduler,
            elastic=self._elastic(),
            max_restarts=self.max_restarts,
            **self._failure(),
            code=list(self.code or []),
            code_include=list(self.code_include or []),
            pip=list(self.pip or []),
            pip_index_urls=list(self.pip_index_url or []),
            requirements=list(self.requirements or []),
        )

    def _fine_tuning(self) -> Any:
        """The fine-tuning flags as the SDK's TorchTuneConfig (authoring/finetune.py), or None."""
        given = [self.epochs, self.batch_size, self.dtype, self.loss, self.lora, self.qlora, self.dora]
        given += [self.dataset_source, self.dataset_split, self.dataset_column_map, self.train_on_input]
        if all(v is None for v in [*given, self.system_prompt]):
            return None
        from ktrain.authoring import finetune
        from ktrain.errors import UsageError

        if self.dtype is not None and self.dtype not in finetune.DTYPES:
            raise UsageError(f"--dtype must be {' or '.join(finetune.DTYPES)}, got {self.dtype!r}")
        if self.dataset_source is not None and self.dataset_source not in finetune.DATA_FORMATS:
            raise UsageError(
                f"--dataset-source must be one of {', '.join(finetune.DATA_FORMATS)}, got {self.dataset_source!r}"
            )
        pefts = [(k, v) for k, v in (("lora", self.lora), ("qlora", self.qlora), ("dora", self.dora)) if v is not None]
        if len(pefts) > 1:
            raise UsageError("give one of --lora, --qlora and --dora")
        peft = None
        if pefts:
            kind, text = pefts[0]
            peft = finetune.parse_peft(kind, "" if text.strip() == "default" else text)
        return finetune.FineTuning(
            dtype=self.dtype,
            batch_size=self.batch_size,
            epochs=self.epochs,
            loss=finetune.parse_loss(self.loss) if self.loss is not None else None,
            peft=peft,
            dataset_source=self.dataset_source,
            dataset_split=self.dataset_split,
            train_on_input=self.train_on_input,
            system_prompt=self.system_prompt,
            column_map=finetune.parse_column_map(self.dataset_column_map) if self.dataset_column_map else None,
        )

    def _node_selector(self) -> dict[str, str]:
        if not self.node_selector:
            return {}
        from ktrain.authoring.placement import parse_node_selector

        return parse_node_selector(self.node_selector)

    def _tolerations(self) -> list[dict[str, Any]]:
        if not self.toleration:
            return []
        from ktrain.authoring.placement import parse_toleration

        return [parse_toleration(t) for t in self.toleration]

    def _elastic(self) -> tuple[int, int] | None:
        if self.elastic is None:
            return None
        from ktrain.authoring.elastic import parse_elastic

        return parse_elastic(self.elastic)

    def _failure(self) -> dict[str, Any]:
        """--restart-on-preemption ... --checkpoint as JobOverrides fields (authoring/failure_policy.py)."""
        if all(v is None for v in (self.fail_on_exit_code, self.restart_strategy, self.ttl, self.checkpoint)):
            return {"restart_on_preemption": self.restart_on_preemption}
        from ktrain.authoring import failure_policy as fp

        return {
            "restart_on_preemption": self.restart_on_preemption,
            "fail_on_exit_codes": fp.parse_exit_codes(self.fail_on_exit_code) if self.fail_on_exit_code else None,
            "restart_strategy": fp.parse_restart_strategy(self.restart_strategy) if self.restart_strategy else None,
            "ttl_seconds": fp.parse_duration_seconds(self.ttl, "--ttl") if self.ttl is not None else None,
            "checkpoint": fp.parse_checkpoint(self.checkpoint) if self.checkpoint is not None else None,
        }

    def render_request(self) -> Any:
        """A `service.RenderRequest` for these inputs."""
        from ktrain.inputs.feature_gates import ENV_FEATURE_GATES, ENV_STATUS_SERVER, merged_gates
        from ktrain.service.requests import RenderRequest

        return RenderRequest(
            file=self.filename,
            overrides=self.overrides(),
            ssh_secret=self.ssh_secret,
            allow_extensions=self.allow_extensions,
            feature_gates=merged_gates(os.environ.get(ENV_FEATURE_GATES), self.feature_gates),
            status_server=self.status_server or os.environ.get(ENV_STATUS_SERVER) or None,
        )

    def registry(self) -> Any:
        return registry_from(self.runtime_file, self.runtimes_dir)

    def resolve_and_render(self, request: Any, run: Any = None) -> tuple[Any, list[str]]:
        """`render_resolving` (or `run` in its place, e.g. `validate_request`) as `job render`,
        `job validate` and `job run` resolve runtimes: local ones first, a cluster's when
        --kubeconfig/--context name one, the current context's for a name found nowhere else."""
        from ktrain.service.render import render_resolving

        explicit_cluster = bool(self.kubeconfig or self.context)
        return render_resolving(request, self.registry(), self.connection(), prefer_cluster=explicit_cluster, run=run)

    def connection(self, request_timeout: float = 30.0) -> Any:
        """The `ConnectionOptions` these inputs name (no cluster is contacted)."""
        return connection(self.kubeconfig, self.context, self.namespace, request_timeout)
