"""A TrainingRuntime generated from the v1 pod templates: one replicated job per v1 replica type
(placed as the `Plan` says), each pod template carried verbatim with the framework container
renamed `node`, the env the v1 controller computed, and v1's retry and success rules."""

from __future__ import annotations

import copy

from ktrain import constants as c
from ktrain.convert import podenv
from ktrain.convert.common import Ctx, Role, Settings, int_port
from ktrain.convert.compat import (
    Placement,
    Torch,
    effective_v1_nproc,
    framework_env,
    user_env_names,
    user_kept_note,
    v2_nproc_per_node,
    without_user_set,
)
from ktrain.convert.kinds import V1, KindInfo
from ktrain.convert.layout import ROLE_SWITCH, Plan
from ktrain.convert.mpi_volumes import rename_operator_mounts
from ktrain.convert.report import APPROXIMATED, DROPPED, KEPT
from ktrain.inputs.documents import Path
from ktrain.util.jsondata import Obj

MAX_INT32 = 2147483647
JOB_DEFAULT_BACKOFF_LIMIT = 6  # a Job's spec.backoffLimit when unset (k8s.io/api batch/v1)
# v1 retried a pod that failed with one of these exit codes (restartPolicy ExitCode) and failed the
# job on any other: training-operator `pkg/util/train` IsRetryableExitCode (exitCode >= 128).
RETRYABLE_EXIT_CODES = list(range(128, 256))
SSHD = ["/usr/sbin/sshd", "-De"]
VOLCANO_SCHEDULER = "volcano"


class Generated:
    """A TrainingRuntime built from the v1 pod templates (used when no runtime fits)."""

    def __init__(
        self, ctx: Ctx, info: KindInfo, api: str, roles: list[Role], name: str, settings: Settings, plan: Plan
    ) -> None:
        self.ctx = ctx
        self.info = info
        self.api = api
        self.roles = roles
        self.name = name
        self.settings = settings
        self.plan = plan
        self.runtime_name = f"{name[:60].rstrip('-.')}-v1"
        self.sources: dict[Path, Path] = {}
        self.rjob_roles: dict[str, Role] = {}
        self.runtime_sources: list[tuple[Path, Path]] = []
        by_type = {r.type: r for r in roles}
        # v2's torch policy would replace PET_MASTER_PORT (v1 set it with a Master) and
        # PET_NPROC_PER_NODE (v1 passed nprocPerNode on, `auto` by default): the runtime uses it only
        # without a Master and when it gives v1's processes per node.
        self.torch_policy = (
            info.kind == "PyTorchJob" and "Master" not in by_type and self._torch_policy_keeps_nproc(by_type)
        )

    def _torch_policy_keeps_nproc(self, by_type: dict[str, Role]) -> bool:
        s = self.settings
        worker = by_type.get("Worker")
        if worker is None:
            return True
        v1 = effective_v1_nproc(Torch(s.nproc_text, s.elastic))
        v2 = v2_nproc_per_node(s.nproc, worker.container.get("resources"))
        if v1 == v2:
            return True
        self.ctx.row(
            ("spec", "nprocPerNode") if s.nproc_text is not None else (*worker.path[:2],),
            KEPT,
            f"runtime containers node env PET_NPROC_PER_NODE={v1}",
            f"v1 passed {v1} on to torchrun{'' if s.nproc_text is not None else ' (nprocPerNode unset: auto)'}; "
            f"v2's torch policy would set {v2} (from the node's resources), so the runtime has no torch policy "
            "and its pods get v1's PET_* values",
        )
        return False

    def build(self, trainjob: Obj, namespace: str | None) -> Obj:
        info, ctx, plan = self.info, self.ctx, self.plan
        by_type = {r.type: r for r in self.roles}
        rjobs: list[Obj] = []
        fw_roles: list[tuple[str, str, int, int]] = []
        for role in self.roles:
            if plan.merged and role.type == "Master":
                self._merged_rows(role, by_type["Worker"])
                continue
            place = plan.layout[role.type]
            if role.replicas == 0:
                ctx.row((*role.path, "replicas"), DROPPED, "-", "0 replicas: no replicated job")
                continue
            fw_roles.append((place.rjob, role.rt, role.replicas, int_port(info, role) if info.default_port else 0))
            rjobs.append(self._rjob(role, place))
            self.rjob_roles[place.rjob] = role
        if info.framework in podenv.SCRIPTS:
            self._framework_env(rjobs, fw_roles)
        if info.kind == "MPIJob":
            rjobs.sort(key=lambda r: 0 if r["name"] == c.NODE else 1)  # node first: the launcher may depend on it
        trainer_count = plan.trainer.replicas + (by_type["Master"].replicas if plan.merged else 0)
        ml: Obj = {"numNodes": 1 if info.kind == "MPIJob" or plan.separate else trainer_count}
        if self.torch_policy:
            ml["torch"] = {}
        elif (info.kind == "XGBoostJob" and not plan.separate) or info.kind == "JAXJob":
            ml[info.framework] = {}
        if info.kind == "MPIJob":
            s = self.settings
            mpi: Obj = {
                "numProcPerNode": s.slots if s.slots is not None else 1,
                "mpiImplementation": s.mpi_impl or "OpenMPI",
                "runLauncherAsNode": s.launcher_as_node,
            }
            if s.ssh_path:
                mpi["sshAuthMountPath"] = s.ssh_path
            ml["mpi"] = mpi
        for k, rjob in enumerate(rjobs):
            self.runtime_sources.append(
                (
                    ("spec", "template", "spec", "replicatedJobs", k, "template", "spec", "template"),
                    (*self.rjob_roles[rjob["name"]].path, "template"),
                )
            )
        rt_spec: Obj = {"mlPolicy": ml}
        s = self.settings
        if s.gang == "volcano":
            rt_spec["podGroupPolicy"] = {"volcano": {}}
        elif s.gang == "coscheduling":
            rt_spec["podGroupPolicy"] = {"coscheduling": {"scheduleTimeoutSeconds": s.schedule_timeout or 60}}
        if s.gang and plan.separate:
            ctx.row(
                ("spec", "runPolicy", "schedulingPolicy"),
                APPROXIMATED,
                "PodGroup minMember",
                "each Worker runs as its own Job of the node step, and v2 counts one pod per replicated job's "
                "Job: the PodGroup's minMember is 2, not every pod",
            )
        js: Obj = {"replicatedJobs": rjobs}
        success = self._success(rjobs)
        if success:
            js["successPolicy"] = success
        template: Obj = {"spec": js}
        if s.queue:
            template["metadata"] = {"annotations": {c.VOLCANO_QUEUE_ANNOTATION: s.queue}}
        rt_spec["template"] = template
        meta: Obj = {
            "name": self.runtime_name,
            "labels": {c.LABEL_FRAMEWORK: info.framework, "ktrain.io/converted-from": info.kind.lower()},
        }
        if namespace:
            meta["namespace"] = namespace
        runtime = {
            "apiVersion": c.TRAINER_API_VERSION,
            "kind": c.TRAINING_RUNTIME_KIND,
            "metadata": meta,
            "spec": rt_spec,
        }
        spec = trainjob["spec"]
        spec["runtimeRef"] = {"name": self.runtime_name, "kind": c.TRAINING_RUNTIME_KIND}
        ctx.row(
            (),
            KEPT,
            f"TrainJob spec.runtimeRef TrainingRuntime {self.runtime_name}",
            "generated from the v1 pod templates",
        )
        if info.kind == "MPIJob":
            workers = by_type.get("Worker")
            n = workers.replicas if workers else 0
            spec["trainer"] = {"numNodes": n + 1 if s.launcher_as_node else max(n, 1)}
            if workers:
                self.sources[("spec", "trainer", "numNodes")] = (*workers.path, "replicas")
        elif not plan.separate:
            trainer: Obj = {"numNodes": trainer_count}
            self.sources[("spec", "trainer", "numNodes")] = (*plan.trainer.path, "replicas")
            if self.torch_policy and s.nproc is not None:
                trainer["numProcPerNode"] = s.nproc
            spec["trainer"] = trainer
        return runtime

    def _merged_rows(self, master: Role, worker: Role) -> None:
        ctx = self.ctx
        ctx.row((*master.path, "replicas"), KEPT, "TrainJob spec.trainer.numNodes", "Master + Worker nodes")
        ctx.row((*master.path, "template"), KEPT, "runtime replicatedJobs[node]", "node 0 runs the Master (rank 0)")
        worker_restart = worker.restart or worker.default_restart
        mine = master.restart or master.default_restart
        ctx.row(
            (*master.path, "restartPolicy"),
            KEPT if mine == worker_restart else APPROXIMATED,
            f"runtime replicatedJobs[node] pod restartPolicy {worker_restart}",
            "" if mine == worker_restart else f"the Master's {mine} gives way to the Worker's (one step)",
        )

    def _framework_env(self, rjobs: list[Obj], fw_roles: list[tuple[str, str, int, int]]) -> None:
        """The env v1 computed per pod. Counts are fixed here, so TensorFlow and MXNet get plain
        env values (the kubelet substitutes the JobSet name and pod index); PaddlePaddle's rank 0
        differs from the others, so its containers start through the wrapper when they have a
        command."""
        info, ctx = self.info, self.ctx
        labels: dict[str, str] = {}
        for role in self.roles:
            tuner = ((role.template.get("metadata") or {}).get("annotations") or {}).get("tuner-server-key")
            if tuner:
                labels[role.rt] = str(tuner)
        mains = []
        for rjob in rjobs:
            cont = rjob["template"]["spec"]["template"]["spec"]["containers"]
            mains.append((rjob["name"], next(x for x in cont if x.get("name") == c.NODE)))
        use_wrapper = info.framework == "paddle" and all(main.get("command") for _, main in mains)
        names = {"tensorflow": "TF_CONFIG", "paddle": "PADDLE_*", "mxnet": "MX_CONFIG and DMLC_*"}[info.framework]
        kept = ""
        for rj, main in mains:
            user_env = main.get("env") or []
            mine = {str(e.get("name")) for e in user_env if isinstance(e, dict)}
            if use_wrapper:
                extra = [{"name": "KTRAIN_TF_SPARSE", "value": "1"}] if self.settings.tf_sparse else []
                program = [*(main.pop("command", None) or []), *(main.pop("args", None) or [])]
                main["command"] = podenv.wrapper_command(info.framework)
                main["args"] = program
                roles_env = podenv.roles_value([(a, b, str(n), p) for a, b, n, p in fw_roles])
                main["env"] = [*podenv.wrapper_env(roles_env, extra), *user_env]
                continue
            if info.framework == "tensorflow":
                static = podenv.tf_static_env(fw_roles, rj, self.settings.tf_sparse)
            elif info.framework == "mxnet":
                static = podenv.mxnet_static_env(fw_roles, rj, labels)
            else:
                static = podenv.paddle_static_env(fw_roles, rj)
            main["env"] = [*podenv.reference_env(), *user_env, *without_user_set(static, mine)]
            kept += user_kept_note(static, mine)
        if use_wrapper:
            ctx.row(
                (*self.roles[0].path[:2],),
                KEPT,
                "runtime containers node: command = the env wrapper, args = the v1 command + args",
                f"{names} computed in each pod as the v1 controller did",
            )
        elif info.framework == "paddle":
            ctx.row(
                (*self.roles[0].path[:2],),
                APPROXIMATED,
                "runtime containers node env PADDLE_*",
                "a container without a command runs its image's entrypoint, so rank 0 names the master "
                "by its host name where v1 gave it its pod IP; set command to get v1's exact values" + kept,
            )
        else:
            ctx.row(
                (*self.roles[0].path[:2],),
                KEPT,
                f"runtime containers node env {names}",
                "v1's values, with JobSet's host names (the kubelet fills in the JobSet name and pod index)" + kept,
            )

    def _mpi_env(self, role: Role, rj: str) -> list[Obj]:
        """What mpi-operator v2beta1 (`mpi_job_controller.go` launcherEnvVars, workerEnvVars,
        intelEnvVars, mpichEnvVars, nvidiaDisableEnvVars) or training-operator's v1 MPIJob
        (`mpijob_controller.go` newLauncher) set that v2's MPI policy does not (v2 sets the OpenMPI
        variables itself)."""
        s = self.settings
        nvidia_off = [
            {"name": "NVIDIA_VISIBLE_DEVICES", "value": ""},
            {"name": "NVIDIA_DRIVER_CAPABILITIES", "value": ""},
        ]
        if self.api == V1:
            # v1 kept the launcher off the GPUs unless it asked for some (isGPULauncher).
            return nvidia_off if rj == c.LAUNCHER and not _asks_for_gpus(role) else []
        env = [{"name": "K_MPI_JOB_ROLE", "value": "launcher" if rj == c.LAUNCHER else "worker"}]
        if rj != c.LAUNCHER:
            return env
        hostfile = "/etc/mpi/hostfile"
        if s.mpi_impl == "Intel":
            env += [
                {"name": "I_MPI_HYDRA_HOST_FILE", "value": hostfile},
                {"name": "I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS", "value": "-o ConnectionAttempts=10"},
                {"name": "I_MPI_PERHOST", "value": str(s.slots if s.slots is not None else 1)},
            ]
        elif s.mpi_impl == "MPICH":
            env += [
                {"name": "HYDRA_HOST_FILE", "value": hostfile},
                {"name": "HYDRA_LAUNCH_EXTRA_ARGS", "value": "-o ConnectionAttempts=10"},
            ]
        if not s.launcher_as_node:
            env += nvidia_off
        return env

    def _success(self, rjobs: list[Obj]) -> Obj | None:
        """v1's success rule per kind (the framework controllers' UpdateJobStatus): the rule's
        replicated job, or JobSet's default (every replicated job) with a Job success policy
        that completes the node step when its pod 0 has succeeded."""
        ctx, info, plan = self.ctx, self.info, self.plan
        names = [r["name"] for r in rjobs]
        by_type = {r.type: r for r in self.roles}

        def target(rj: str, role: Role, note: str) -> Obj:
            ctx.row((*role.path,), KEPT, f"runtime successPolicy: replicatedJobs[{rj}] succeeded", note)
            return {"operator": "All", "targetReplicatedJobs": [rj]}

        def first_pod(role: Role, note: str) -> None:
            node = next(r for r in rjobs if r["name"] == c.NODE)
            node["template"]["spec"]["successPolicy"] = {"rules": [{"succeededIndexes": "0"}]}
            ctx.row(
                (*role.path,),
                KEPT,
                "runtime replicatedJobs[node] Job successPolicy succeededIndexes 0",
                note + "; Kubernetes 1.31 or later (older clusters wait for every pod of the step)",
            )

        if info.kind == "MPIJob" and c.LAUNCHER in names:
            return target(c.LAUNCHER, by_type["Launcher"], "v1: the launcher's success")
        if info.kind in ("PyTorchJob", "XGBoostJob", "PaddleJob") and "master" in names:
            return target("master", by_type["Master"], "v1: the Master's success")
        if plan.merged and c.NODE in names:
            first_pod(by_type["Master"], "v1: the Master's success; node 0 is the Master")
            return None
        if info.kind == "MXJob":
            if "scheduler" in names:
                return target("scheduler", by_type["Scheduler"], "v1: the Scheduler's success")
            ctx.row(
                (*self.roles[0].path[:2],),
                APPROXIMATED,
                "JobSet default: every replicated job",
                "v1 marked an MXJob succeeded only when its Scheduler did; this one has none",
            )
            return None
        if info.kind == "TFJob":
            for first, t in (("chief", "Chief"), ("master", "Master")):
                if first in names:
                    if self.settings.tf_success is not None:
                        ctx.row(
                            ("spec", "successPolicy"),
                            KEPT,
                            f"runtime successPolicy: replicatedJobs[{first}] succeeded",
                            f"with a {t}, v1 too ignored successPolicy: the {t}'s success ends the job",
                        )
                    return target(first, by_type[t], f"v1: the {t}'s success")
            if c.NODE in names and "Worker" in by_type:
                if self.settings.tf_success == "AllWorkers":
                    ctx.row(("spec", "successPolicy"), KEPT, "JobSet default: every worker", "AllWorkers, as v1")
                    if len(names) < 2:
                        return None
                    return {"operator": "All", "targetReplicatedJobs": [c.NODE]}
                first_pod(by_type["Worker"], "v1's default: the job succeeds when worker 0 does")
                if len(names) > 1:
                    return {"operator": "All", "targetReplicatedJobs": [c.NODE]}
                return None
        if len(names) < 2:
            return None
        if c.NODE in names:
            return {"operator": "All", "targetReplicatedJobs": [c.NODE]}
        return None

    def _rjob(self, role: Role, place: Placement) -> Obj:
        ctx, info, plan, s = self.ctx, self.info, self.plan, self.settings
        rj = place.rjob
        is_trainer = role is plan.trainer
        pod_template = copy.deepcopy(role.template)
        pod = pod_template["spec"]
        target = f"runtime replicatedJobs[{rj}]"
        if info.kind == "MPIJob":
            ctx.row(
                (*role.path, "replicas"),
                KEPT,
                "runtime mlPolicy.numNodes 1 (the launcher)" if rj == c.LAUNCHER else "TrainJob spec.trainer.numNodes",
            )
        elif place.per_job:
            ctx.row(
                (*role.path, "replicas"),
                KEPT,
                f"{target} replicas (one Job per {role.type})",
                "each Job's global index is v1's rank (jobset.sigs.k8s.io/job-global-index)",
            )
        else:
            ctx.row(
                (*role.path, "replicas"),
                KEPT,
                "TrainJob spec.trainer.numNodes" if is_trainer and not plan.separate else f"{target} parallelism",
            )
        cont = pod["containers"][role.main]
        old = cont.get("name")
        cont["name"] = c.NODE
        if plan.merged and role.type == "Worker":
            cont.pop("command", None)
            cont.pop("args", None)
            if plan.command is not None:
                cont["command"] = plan.command
            if plan.args is not None:
                cont["args"] = plan.args
        cpath = (*role.path, "template", "spec", "containers", role.main)
        ctx.row((*cpath, "name"), KEPT, f"{target} container `node`", f"was {old!r}: v2 plugins act on `node`")
        for key in cont:
            if key != "name":
                ctx.row((*cpath, key), KEPT, f"{target} container node.{key}")
        for i, other in enumerate(pod["containers"]):
            if i != role.main:
                if other.get("name") == c.NODE:
                    raise ctx.error(
                        "a container is already named `node`; ktrain renames the framework container to it",
                        (*role.path, "template", "spec", "containers", i, "name"),
                        hint="rename that container",
                    )
                ctx.row(
                    (*role.path, "template", "spec", "containers", i),
                    KEPT,
                    f"{target} container {other.get('name')}",
                    "v1 gave it the framework env too; here only the framework container has it",
                )
        for key in pod:
            if key == "restartPolicy" and _overridden_restart(role):
                # kubeflow/common setRestartPolicy: the v1 controller wrote the replica's policy over
                # the template's (ExitCode as Never), so the template's value never reached a pod.
                ctx.row(
                    (*role.path, "template", "spec", key),
                    DROPPED,
                    "-",
                    f"v1 replaced it with the replica's restartPolicy {role.restart or role.default_restart}"
                    + ("" if role.restart else " (v1's default)"),
                )
            elif key != "containers":
                ctx.row((*role.path, "template", "spec", key), KEPT, f"{target} pod spec {key}")
        for key in pod_template.get("metadata") or {}:
            ctx.row((*role.path, "template", "metadata", key), KEPT, f"{target} pod template metadata.{key}")
        job_spec: Obj = {"template": pod_template}
        self._retries(role, target, pod, job_spec)
        if info.kind == "MPIJob":
            self._mpi_pod(role, rj, cont, cpath)
            rename_operator_mounts(ctx, role, self.api, rj, pod_template)
        elif info.kind in ("PyTorchJob", "XGBoostJob", "JAXJob"):
            torch = Torch(s.nproc_text, s.elastic, policy=self.torch_policy)
            full = framework_env(info, self.roles, self.name, plan.layout, role.type, torch)
            env = without_user_set(full, user_env_names(role))
            note = base_note = "what v1's controller set for these pods, with JobSet's host names"
            note += user_kept_note(full, user_env_names(role))
            if self.torch_policy and s.elastic is not None:
                note += "; PET_NNODES is the node count (v2's torch policy), where v1 gave MIN:MAX"
            if plan.merged and plan.command and plan.command[:2] == ROLE_SWITCH[:2]:
                env.append(
                    {
                        "name": "KTRAIN_POD_INDEX",
                        "valueFrom": {"fieldRef": {"fieldPath": c.COMPLETION_INDEX_FIELD_PATH}},
                    }
                )
            if env:
                cont["env"] = [*(cont.get("env") or []), *env]
            if env or note != base_note:
                ctx.row(
                    (*role.path,),
                    KEPT,
                    f"{target} container node env " + ", ".join(e["name"] for e in env),
                    note,
                )
        self._scheduling(role, target, pod)
        if pod_template.get("metadata") == {}:
            pod_template.pop("metadata")
        if place.per_job:
            job_spec["parallelism"] = 1
            job_spec["completions"] = 1
        elif not is_trainer or plan.separate:
            job_spec["parallelism"] = role.replicas
            job_spec["completions"] = role.replicas
        rjob: Obj = {"name": rj, "template": {"spec": job_spec}}
        if place.per_job:
            rjob["replicas"] = role.replicas
        if is_trainer:
            rjob["template"] = {"metadata": {"labels": {c.LABEL_ANCESTOR: c.ANCESTOR_TRAINER}}, "spec": job_spec}
        if info.kind == "MPIJob" and rj == c.LAUNCHER and s.wait_workers:
            rjob["dependsOn"] = [{"name": c.NODE, "status": "Ready"}]
        return rjob

    def _retries(self, role: Role, target: str, pod: Obj, job_spec: Obj) -> None:
        """v1's restart policy and retries as the Job's: Never fails at once (v1's framework
        controllers failed the job when a Never pod failed, whatever runPolicy.backoffLimit says);
        OnFailure restarts in place up to runPolicy.backoffLimit, else without limit (common/job.go
        PastBackoffLimit counts those restarts); ExitCode retries exit codes 128-255 and fails on
        the others (common/pod.go ReconcilePods). mpi-operator's v2beta1 MPIJob has its own rules
        (`_mpi_operator_retries`)."""
        if self.info.kind == "MPIJob" and self.api != V1:
            self._mpi_operator_retries(role, target, pod, job_spec)
            return
        ctx, info, s = self.ctx, self.info, self.settings
        restart = role.restart or role.default_restart
        p = (*role.path, "restartPolicy")
        unset = "" if role.restart else f"unset: v1's default for a {info.kind} {role.type}; "
        limit = s.backoff_limit if s.backoff_limit is not None else MAX_INT32
        limit_text = f"runPolicy.backoffLimit {s.backoff_limit}" if s.backoff_limit is not None else "no limit, as v1"
        if restart == "Never":
            pod["restartPolicy"] = "Never"
            job_spec["backoffLimit"] = 0
            ctx.row(
                p,
                KEPT,
                f"{target} pod restartPolicy Never, Job backoffLimit 0",
                unset + "a failed pod fails the job, as v1",
            )
        elif restart == "ExitCode":
            pod["restartPolicy"] = "Never"
            job_spec["backoffLimit"] = limit
            job_spec["podFailurePolicy"] = {
                "rules": [
                    {
                        "action": "FailJob",
                        "onExitCodes": {"containerName": c.NODE, "operator": "NotIn", "values": RETRYABLE_EXIT_CODES},
                    }
                ]
            }
            ctx.row(
                p,
                KEPT,
                f"{target} pod restartPolicy Never, Job podFailurePolicy, backoffLimit {limit}",
                f"exit codes 128-255 replace the pod ({limit_text}), any other fails the job, as v1",
            )
        else:
            pod["restartPolicy"] = "OnFailure"
            job_spec["backoffLimit"] = limit
            if restart == "Always":
                ctx.row(
                    p,
                    APPROXIMATED,
                    f"{target} pod restartPolicy OnFailure, Job backoffLimit {limit}",
                    f"Job pods cannot be Always; OnFailure restarts failed containers ({limit_text})",
                )
            else:
                ctx.row(
                    p,
                    KEPT,
                    f"{target} pod restartPolicy OnFailure, Job backoffLimit {limit}",
                    unset + f"failed containers restart in place ({limit_text})",
                )

    def _mpi_operator_retries(self, role: Role, target: str, pod: Obj, job_spec: Obj) -> None:
        """mpi-operator v2 (`pkg/controller/mpi_job_controller.go`): the launcher runs in a Job of
        its own, newLauncherJob, whose backoffLimit, activeDeadlineSeconds and
        ttlSecondsAfterFinished are runPolicy's as written: unset, the Job's own default of 6 retries
        applies, whatever the restart policy (setRestartPolicy makes ExitCode Never, with no exit-code
        rule). The workers are plain pods (newWorker, getOrCreateWorker): OnFailure restarts them in
        place without limit (no Job counts the restarts; runPolicy.backoffLimit is the launcher's),
        and a failed Never worker is left failed, never re-created."""
        ctx, s = self.ctx, self.settings
        restart = role.restart or role.default_restart
        p = (*role.path, "restartPolicy")
        unset = "" if role.restart else "unset: mpi-operator's default; "
        pod["restartPolicy"] = "Never" if restart == "ExitCode" else "OnFailure" if restart == "Always" else restart
        given = pod["restartPolicy"]
        if role.type == "Launcher":
            limit = s.backoff_limit if s.backoff_limit is not None else JOB_DEFAULT_BACKOFF_LIMIT
            job_spec["backoffLimit"] = limit
            if s.launcher_deadline is not None:
                job_spec["activeDeadlineSeconds"] = s.launcher_deadline
            why = (
                f"runPolicy.backoffLimit {s.backoff_limit}"
                if s.backoff_limit is not None
                else "runPolicy.backoffLimit unset: the Job's default 6"
            )
            ctx.row(
                p,
                KEPT if restart in ("OnFailure", "Never") else APPROXIMATED,
                f"{target} pod restartPolicy {given}, Job backoffLimit {limit}",
                unset
                + f"mpi-operator ran the launcher in a Job with this backoffLimit ({why}; newLauncherJob)"
                + ("" if restart in ("OnFailure", "Never") else f"; {restart} becomes {given} there too"),
            )
            return
        if given == "OnFailure":
            job_spec["backoffLimit"] = MAX_INT32
            ctx.row(
                p,
                KEPT if restart == "OnFailure" else APPROXIMATED,
                f"{target} pod restartPolicy OnFailure, Job backoffLimit {MAX_INT32}",
                unset + "mpi-operator's worker pods were not in a Job: failed containers restarted in place "
                "without limit (runPolicy.backoffLimit is the launcher's)",
            )
            return
        job_spec["backoffLimit"] = 0
        ctx.row(
            p,
            APPROXIMATED,
            f"{target} pod restartPolicy Never, Job backoffLimit 0",
            unset + "mpi-operator left a failed worker pod failed (never re-created it) and the MPIJob failed when "
            "the launcher gave up; here a failed worker fails the job at once"
            + ("" if restart == "Never" else f" ({restart} is Never there too)"),
        )

    def _mpi_pod(self, role: Role, rj: str, cont: Obj, cpath: Path) -> None:
        ctx = self.ctx
        env = self._mpi_env(role, rj)
        if env:
            cont["env"] = [*(cont.get("env") or []), *without_user_set(env, user_env_names(role))]
        if rj == c.LAUNCHER:
            return
        if self.api == V1 and not cont.get("command"):
            # training-operator's newWorker: `sleep 365d` (the launcher ran ranks with kubectl exec).
            cont.pop("args", None)
            cont["command"] = list(SSHD)
            ctx.row(
                (*cpath, "command"),
                APPROXIMATED,
                "runtime replicatedJobs[node] container node.command /usr/sbin/sshd -De",
                "unset: v1 ran `sleep 365d` and reached the workers with kubectl exec; v2 reaches them over "
                "SSH, so the worker runs sshd as mpi-operator v2beta1 does (the image must have it)",
            )
        elif self.api != V1 and not cont.get("command") and not cont.get("args"):
            cont["command"] = list(SSHD)  # mpi-operator v2beta1 newWorker
            ctx.row(
                (*cpath, "command"),
                KEPT,
                "runtime replicatedJobs[node] container node.command /usr/sbin/sshd -De",
                "unset: what mpi-operator v2beta1 ran",
            )

    def _scheduling(self, role: Role, target: str, pod: Obj) -> None:
        s, ctx = self.settings, self.ctx
        if s.priority_class and "priorityClassName" not in pod:
            pod["priorityClassName"] = s.priority_class
        if s.gang != "volcano":
            return
        name = pod.get("schedulerName")
        if name is None:
            # v1 named the gang scheduler on pods that named none (common/pod.go createNewPod).
            pod["schedulerName"] = VOLCANO_SCHEDULER
            ctx.row(
                (*role.path, "template", "spec"),
                KEPT,
                f"{target} pod spec schedulerName {VOLCANO_SCHEDULER}",
                "Volcano gang-schedules the pods that name it, as v1 set it",
            )
        elif name != VOLCANO_SCHEDULER:
            ctx.row(
                (*role.path, "template", "spec", "schedulerName"),
                APPROXIMATED,
                f"{target} pod spec schedulerName {name}",
                "kept as written (v1 too); Volcano gang-schedules only pods that name volcano",
            )


def _asks_for_gpus(role: Role) -> bool:
    """training-operator's isGPULauncher: a launcher container with an nvidia.com/gpu limit."""
    for cont in role.template["spec"].get("containers") or []:
        limits = ((cont.get("resources") or {}).get("limits") or {}) if isinstance(cont, dict) else {}
        if "nvidia.com/gpu" in limits:
            return True
    return False


def _overridden_restart(role: Role) -> bool:
    """Whether the template's own pod restartPolicy differs from the one v1 gave the pod."""
    written = role.template.get("spec", {}).get("restartPolicy")
    restart = role.restart or role.default_restart
    given = "Never" if restart == "ExitCode" else restart
    return written is not None and written != given
