"""The v1 spec-level fields: runPolicy, schedulingPolicy and each kind's own fields. They
fill the TrainJob spec where it can carry them, and `Settings` for a generated runtime."""

from __future__ import annotations

from typing import Any

from ktrain import constants as c
from ktrain.convert.common import Ctx, Role, Settings
from ktrain.convert.kinds import (
    PADDLE_ELASTIC_FIELDS,
    RUN_POLICY_FIELDS,
    SCHEDULING_POLICY_FIELDS,
    TORCH_ELASTIC_FIELDS,
    V1,
    KindInfo,
)
from ktrain.convert.report import APPROXIMATED, DROPPED, KEPT
from ktrain.inputs.documents import Path
from ktrain.util.jsondata import Obj


def run_policy(ctx: Ctx, info: KindInfo, spec: Obj, tj_spec: Obj, gen: Settings, api: str = V1) -> None:
    if "runPolicy" not in spec:
        return
    rp = ctx.typed(spec["runPolicy"], dict, ("spec", "runPolicy"), "a mapping")
    ctx.known(rp, RUN_POLICY_FIELDS, ("spec", "runPolicy"), "runPolicy")
    p: Path = ("spec", "runPolicy")
    if "cleanPodPolicy" in rp:
        ctx.row(
            (*p, "cleanPodPolicy"),
            DROPPED,
            "-",
            "v2 has no equivalent: finished pods stay until the TrainJob is deleted (`ktrain job delete`)",
        )
    if "ttlSecondsAfterFinished" in rp:
        ctx.typed(rp["ttlSecondsAfterFinished"], int, (*p, "ttlSecondsAfterFinished"), "an integer")
        ctx.row(
            (*p, "ttlSecondsAfterFinished"),
            DROPPED,
            "-",
            "v2 TrainJobs have no TTL (a JobSet TTL would make the controller re-create the JobSet); "
            "delete finished jobs with `ktrain job delete`"
            + (
                " (mpi-operator gave it to the launcher Job only: the MPIJob itself stayed)"
                if info.kind == "MPIJob" and api != V1
                else ""
            ),
        )
    mpi_operator = info.kind == "MPIJob" and api != V1
    if "activeDeadlineSeconds" in rp:
        value = ctx.typed(rp["activeDeadlineSeconds"], int, (*p, "activeDeadlineSeconds"), "an integer")
        if mpi_operator:
            # mpi-operator v2 newLauncherJob: the launcher Job's own activeDeadlineSeconds.
            gen.launcher_deadline = value
            gen.block((*p, "activeDeadlineSeconds"), "the launcher Job's deadline needs a runtime")
            gen.row(
                (*p, "activeDeadlineSeconds"),
                KEPT,
                "runtime replicatedJobs[launcher].template.spec.activeDeadlineSeconds",
                "as mpi-operator's launcher Job (newLauncherJob): the launcher fails at the deadline, "
                "and the job with it",
            )
        else:
            tj_spec["activeDeadlineSeconds"] = value
            ctx.sources[("spec", "activeDeadlineSeconds")] = (*p, "activeDeadlineSeconds")
            ctx.row((*p, "activeDeadlineSeconds"), KEPT, "TrainJob spec.activeDeadlineSeconds")
    if "backoffLimit" in rp:
        value = ctx.typed(rp["backoffLimit"], int, (*p, "backoffLimit"), "an integer")
        gen.backoff_limit = value
        gen.block((*p, "backoffLimit"), "runPolicy.backoffLimit needs a runtime")
        gen.row(
            (*p, "backoffLimit"),
            KEPT if mpi_operator else APPROXIMATED,
            "runtime replicatedJobs[launcher].template.spec.backoffLimit"
            if mpi_operator
            else "runtime replicatedJobs[*].template.spec.backoffLimit",
            "the launcher Job's backoffLimit, as mpi-operator's newLauncherJob (the workers' restarts are not counted)"
            if mpi_operator
            else "each replicated Job retries failed pods up to this many times (v1 counted the whole job)",
        )
    if "suspend" in rp:
        value = ctx.typed(rp["suspend"], bool, (*p, "suspend"), "a boolean")
        tj_spec["suspend"] = value
        ctx.sources[("spec", "suspend")] = (*p, "suspend")
        ctx.row((*p, "suspend"), KEPT, "TrainJob spec.suspend")
    if "managedBy" in rp:
        value = ctx.typed(rp["managedBy"], str, (*p, "managedBy"), "a string")
        if value == c.MANAGED_BY_MULTIKUEUE:
            tj_spec["managedBy"] = value
            ctx.row((*p, "managedBy"), KEPT, "TrainJob spec.managedBy")
        else:
            ctx.row(
                (*p, "managedBy"),
                APPROXIMATED,
                f"TrainJob spec.managedBy (default {c.MANAGED_BY_TRAINER})",
                "the Trainer controller manages the TrainJob",
            )
    if "schedulingPolicy" in rp:
        _scheduling(ctx, rp["schedulingPolicy"], (*p, "schedulingPolicy"), gen)


def _scheduling(ctx: Ctx, sp: Any, p: Path, gen: Settings) -> None:
    sp = ctx.typed(sp, dict, p, "a mapping")
    ctx.known(sp, SCHEDULING_POLICY_FIELDS, p, "schedulingPolicy")
    if not sp:
        ctx.row(p, DROPPED, "-", "empty")
        return
    gen.block(p, "gang scheduling needs a runtime podGroupPolicy")
    if "queue" in sp:
        queue = ctx.typed(sp["queue"], str, (*p, "queue"), "a string")
        gen.queue = queue
        gen.row(
            (*p, "queue"),
            KEPT,
            f"runtime podGroupPolicy.volcano + template.metadata.annotations[{c.VOLCANO_QUEUE_ANNOTATION}]",
            "the Volcano queue (v1's scheduling queue)",
        )
    timeout = sp.get("scheduleTimeoutSeconds")
    if timeout is not None:
        gen.schedule_timeout = ctx.typed(timeout, int, (*p, "scheduleTimeoutSeconds"), "an integer")
        if "queue" in sp:
            gen.row(
                (*p, "scheduleTimeoutSeconds"),
                DROPPED,
                "-",
                "Volcano PodGroups made by v2 have no schedule timeout (a queue selects Volcano)",
            )
        else:
            gen.row((*p, "scheduleTimeoutSeconds"), KEPT, "runtime podGroupPolicy.coscheduling.scheduleTimeoutSeconds")
    if "priorityClass" in sp:
        gen.priority_class = ctx.typed(sp["priorityClass"], str, (*p, "priorityClass"), "a string")
        gen.row(
            (*p, "priorityClass"),
            KEPT,
            "runtime pod templates' priorityClassName",
            "the PodGroup takes its priority from the pods",
        )
    if "minAvailable" in sp:
        ctx.typed(sp["minAvailable"], int, (*p, "minAvailable"), "an integer")
        gen.row(
            (*p, "minAvailable"),
            APPROXIMATED,
            "PodGroup minMember (computed)",
            "v2 gang-schedules every pod of the job: minMember is the total pod count",
        )
    if "minResources" in sp:
        gen.row(
            (*p, "minResources"),
            APPROXIMATED,
            "PodGroup minResources (computed)",
            "v2 sums the pods' resource requests",
        )
    if "queue" not in sp and timeout is None:
        gen.schedule_timeout = None
    gen.gang = "volcano" if "queue" in sp else "coscheduling"
    if gen.gang == "coscheduling":
        gen.row(p, APPROXIMATED, "runtime podGroupPolicy.coscheduling", "v1 took the gang scheduler from its flags")


def kind_fields(ctx: Ctx, info: KindInfo, api: str, spec: Obj, tj_spec: Obj, gen: Settings, roles: list[Role]) -> None:
    kind = info.kind
    if kind == "PyTorchJob":
        _pytorch_fields(ctx, spec, gen)
    elif kind == "TFJob":
        if "successPolicy" in spec:
            value = spec["successPolicy"]
            if value not in (None, "", "AllWorkers"):
                raise ctx.error("successPolicy must be AllWorkers or empty (v1's default)", ("spec", "successPolicy"))
            gen.tf_success = value or ""
        if spec.get("enableDynamicWorker"):
            ctx.typed(spec["enableDynamicWorker"], bool, ("spec", "enableDynamicWorker"), "a boolean")
            gen.tf_sparse = True
            ctx.row(("spec", "enableDynamicWorker"), KEPT, "TF_CONFIG sparseCluster (env KTRAIN_TF_SPARSE=1)")
        elif "enableDynamicWorker" in spec:
            ctx.row(("spec", "enableDynamicWorker"), KEPT, "-", "false: the full cluster spec, as v1")
    elif kind == "PaddleJob":
        if "elasticPolicy" in spec:
            ep = ctx.typed(spec["elasticPolicy"], dict, ("spec", "elasticPolicy"), "a mapping")
            ctx.known(ep, PADDLE_ELASTIC_FIELDS, ("spec", "elasticPolicy"), "elasticPolicy")
            for key in ep:
                ctx.row(("spec", "elasticPolicy", key), DROPPED, "-", "Trainer v2 has no elastic training")
    elif kind == "MXJob":
        if "jobMode" in spec:
            ctx.row(
                ("spec", "jobMode"),
                KEPT,
                "-",
                "informational in v1 too: the replica types decide what runs (MXTrain or MXTune)",
            )
    elif kind == "MPIJob":
        _mpi_fields(ctx, api, spec, gen)


def _mpi_fields(ctx: Ctx, api: str, spec: Obj, gen: Settings) -> None:
    if "slotsPerWorker" in spec:
        gen.slots = ctx.typed(spec["slotsPerWorker"], int, ("spec", "slotsPerWorker"), "an integer")
        gen.row(("spec", "slotsPerWorker"), KEPT, "runtime mlPolicy.mpi.numProcPerNode", "the hostfile's slots")
    if "sshAuthMountPath" in spec:
        gen.ssh_path = ctx.typed(spec["sshAuthMountPath"], str, ("spec", "sshAuthMountPath"), "a string")
        gen.row(("spec", "sshAuthMountPath"), KEPT, "runtime mlPolicy.mpi.sshAuthMountPath")
    if "mpiImplementation" in spec:
        impl = ctx.typed(spec["mpiImplementation"], str, ("spec", "mpiImplementation"), "a string")
        if impl not in ("OpenMPI", "Intel", "MPICH"):
            raise ctx.error("mpiImplementation must be OpenMPI, Intel or MPICH", ("spec", "mpiImplementation"))
        gen.mpi_impl = impl
        gen.row(
            ("spec", "mpiImplementation"),
            KEPT if impl == "OpenMPI" else APPROXIMATED,
            "runtime mlPolicy.mpi.mpiImplementation",
            ""
            if impl == "OpenMPI"
            else f"{impl} hostfiles (`host:slots`) are a ktrain extension: render with --allow-extensions; "
            "the Trainer v2.3 CRD accepts only OpenMPI",
        )
    if "runLauncherAsWorker" in spec:
        gen.launcher_as_node = ctx.typed(
            spec["runLauncherAsWorker"], bool, ("spec", "runLauncherAsWorker"), "a boolean"
        )
        gen.row(("spec", "runLauncherAsWorker"), KEPT, "runtime mlPolicy.mpi.runLauncherAsNode")
    if "launcherCreationPolicy" in spec:
        value = spec["launcherCreationPolicy"]
        if value not in ("AtStartup", "WaitForWorkersReady"):
            raise ctx.error(
                "launcherCreationPolicy must be AtStartup or WaitForWorkersReady", ("spec", "launcherCreationPolicy")
            )
        gen.wait_workers = value == "WaitForWorkersReady"
        gen.row(
            ("spec", "launcherCreationPolicy"),
            KEPT,
            "runtime replicatedJobs[launcher].dependsOn [node Ready]" if gen.wait_workers else "-",
            "" if gen.wait_workers else "AtStartup: the launcher starts with the workers",
        )
    if "cleanPodPolicy" in spec:
        ctx.row(("spec", "cleanPodPolicy"), DROPPED, "-", "v2 has no equivalent (see runPolicy.cleanPodPolicy)")
    if "mainContainer" in spec:
        ctx.typed(spec["mainContainer"], str, ("spec", "mainContainer"), "a string")
        ctx.row(("spec", "mainContainer"), KEPT, "the container renamed `node`", "selects the MPI container")
    gen.row(
        ("spec", "mpiReplicaSpecs"),
        APPROXIMATED if api == V1 else KEPT,
        "runtime replicatedJobs launcher + node, mlPolicy.mpi",
        "v1 MPIJobs reached workers with kubectl exec; v2 uses SSH: the worker image must run sshd"
        if api == V1
        else "workers reached over SSH, as mpi-operator v2beta1",
    )


ELASTIC_ENV_OF = {
    "rdzvBackend": "PET_RDZV_BACKEND",
    "rdzvHost": "PET_RDZV_ENDPOINT",
    "rdzvPort": "PET_RDZV_ENDPOINT",
    "rdzvId": "PET_RDZV_ID",
    "rdzvConf": "PET_RDZV_CONF",
    "standalone": "PET_STANDALONE",
    "maxRestarts": "PET_MAX_RESTARTS",
}


def _pytorch_fields(ctx: Ctx, spec: Obj, gen: Settings) -> None:
    """nprocPerNode and elasticPolicy: v1's setPodEnv turned them into env (pytorch `envvar.go`,
    `elastic.go`); the rendezvous variables are carried as v1 set them."""
    nproc = spec.get("nprocPerNode")
    elastic = spec.get("elasticPolicy")
    if elastic is not None:
        ep = ctx.typed(elastic, dict, ("spec", "elasticPolicy"), "a mapping")
        ctx.known(ep, TORCH_ELASTIC_FIELDS, ("spec", "elasticPolicy"), "elasticPolicy")
        for key in ("minReplicas", "maxReplicas", "rdzvPort", "maxRestarts", "nProcPerNode"):
            if ep.get(key) is not None:
                ctx.typed(ep[key], int, ("spec", "elasticPolicy", key), "an integer")
        for key in ("rdzvHost", "rdzvId", "rdzvBackend"):
            if ep.get(key) is not None:
                ctx.typed(ep[key], str, ("spec", "elasticPolicy", key), "a string")
        if ep.get("rdzvConf") is not None:
            ctx.typed(ep["rdzvConf"], list, ("spec", "elasticPolicy", "rdzvConf"), "a list")
            for i, item in enumerate(ep["rdzvConf"]):
                at: Path = ("spec", "elasticPolicy", "rdzvConf", i)
                ctx.typed(item, dict, at, "a mapping of key and value")
                for k in ("key", "value"):
                    if item.get(k) is not None:
                        ctx.typed(item[k], str, (*at, k), "a string")
        gen.elastic = dict(ep)
        for key in ep:
            path = ("spec", "elasticPolicy", key)
            if key == "nProcPerNode" and nproc is None:
                nproc = ep[key]
                continue
            if key in ("minReplicas", "maxReplicas"):
                ctx.row(
                    path,
                    APPROXIMATED,
                    "TrainJob spec.trainer.numNodes (fixed)",
                    "Trainer v2 has no elastic training: JobSet runs the replicas, no fewer and no more "
                    "(v1 scaled between minReplicas and maxReplicas; PET_NNODES was MIN:MAX)",
                )
            elif key in ELASTIC_ENV_OF:
                ctx.row(path, KEPT, f"env {ELASTIC_ENV_OF[key]}", "torchrun's rendezvous, as v1 set it")
            elif key == "nProcPerNode":
                ctx.row(path, DROPPED, "-", "spec.nprocPerNode is set: v1 used that one")
            else:  # metrics
                ctx.row(path, DROPPED, "-", "v1 scaled the job with a HorizontalPodAutoscaler; v2 has none")
    if nproc is not None:
        where = ("spec", "nprocPerNode") if "nprocPerNode" in spec else ("spec", "elasticPolicy", "nProcPerNode")
        text = str(nproc)
        if "nprocPerNode" in spec:
            gen.nproc_text = text  # v1 passed spec.nprocPerNode on (elasticPolicy's went to elastic.go)
        if (isinstance(nproc, int) and not isinstance(nproc, bool)) or text.isdigit():
            gen.nproc = int(text)
            ctx.row(where, KEPT, "TrainJob spec.trainer.numProcPerNode (PET_NPROC_PER_NODE), WORLD_SIZE")
        elif text in ("auto", "gpu", "cpu"):
            ctx.row(
                where,
                KEPT if text == "auto" else APPROXIMATED,
                "TrainJob spec.trainer.numProcPerNode unset (auto)",
                "v2 auto: one process per GPU, else per CPU of the request"
                if text != "auto"
                else "auto is v2's default",
            )
        else:
            raise ctx.error("nprocPerNode must be an integer, auto, cpu or gpu", where)
