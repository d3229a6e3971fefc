"""A TrainingRuntime generated from the v1 pod templates: one replicated job per v1 replica type."""

from __future__ import annotations

import copy
from typing import Any

from ktrain import constants as c
from ktrain.convert import podenv
from ktrain.convert.bundled import ROLE_SWITCH, merged_command, same_but_command
from ktrain.convert.common import Ctx, Obj, Role, Settings, int_port
from ktrain.convert.compat import compat_env
from ktrain.convert.kinds import V1, KindInfo
from ktrain.convert.report import APPROXIMATED, DROPPED, KEPT
from ktrain.inputs.documents import Path


class Generated:
    """A TrainingRuntime built from the v1 pod templates (used when no runtime fits)."""

    def __init__(self, ctx: Ctx, info: KindInfo, api: str, roles: list[Role], name: str, settings: Settings) -> None:
        self.ctx = ctx
        self.info = info
        self.api = api
        self.roles = roles
        self.name = name
        self.settings = settings
        self.runtime_name = f"{name[:60].rstrip('-.')}-v1"
        self.sources: dict[Path, Path] = {}
        self.rjob_roles: dict[str, Role] = {}
        self.runtime_sources: list[tuple[Path, Path]] = []

    def _rjob_name(self, role: Role, trainer: Role) -> str:
        if self.info.kind == "MPIJob":
            return c.LAUNCHER if role.type == "Launcher" else c.NODE
        return c.NODE if role is trainer else role.rt

    def trainer_role(self) -> Role:
        by_type = {r.type: r for r in self.roles}
        order = {
            "MPIJob": ("Launcher",),
            "TFJob": ("Worker", "Chief", "Master", "PS", "Evaluator"),
            "MXJob": ("Worker", "Scheduler", "Server", "Tuner", "TunerServer", "TunerTracker"),
        }.get(self.info.kind, ("Worker", "Master"))
        for t in order:
            if t in by_type:
                return by_type[t]
        return self.roles[0]

    def build(self, trainjob: Obj, namespace: str | None) -> Obj:
        info, ctx = self.info, self.ctx
        trainer_role = self.trainer_role()
        merge_master = info.kind in ("PyTorchJob", "XGBoostJob")
        by_type = {r.type: r for r in self.roles}
        # PyTorch/XGBoost: Master and Worker run as one `node` step when only their commands
        # differ (node 0 is v1's Master, as v1's rank 0), so v2's policy env covers them all.
        separate = merge_master and "Master" in by_type and "Worker" in by_type
        merged: Role | None = None
        command_override: tuple[list[Any] | None, list[Any] | None] | None = None
        if merge_master and "Master" in by_type and "Worker" in by_type:
            master, worker = by_type["Master"], by_type["Worker"]
            if master.replicas == 1 and same_but_command(master, worker):
                cmd, args, problem = merged_command(master, worker)
                if problem is None:
                    merged = master
                    command_override = (cmd, args)
        rjobs: list[Obj] = []
        fw_roles: list[tuple[str, str, int, int]] = []
        trainer_count = trainer_role.replicas
        if merged is not None:
            trainer_count = by_type["Master"].replicas + by_type["Worker"].replicas
        for role in self.roles:
            if role is merged:
                ctx.row((*role.path, "replicas"), KEPT, "TrainJob spec.trainer.numNodes", "Master + Worker nodes")
                ctx.row((*role.path, "template"), KEPT, "runtime replicatedJobs[node]", "node 0 runs the Master")
                worker_restart = by_type["Worker"].restart or by_type["Worker"].default_restart
                mine = role.restart or role.default_restart
                ctx.row(
                    (*role.path, "restartPolicy"),
                    KEPT if mine == worker_restart else APPROXIMATED,
                    f"runtime replicatedJobs[node] pod restartPolicy {worker_restart}",
                    "" if mine == worker_restart else f"the Master's {mine} gives way to the Worker's (one step)",
                )
                continue
            rj = self._rjob_name(role, trainer_role if merged is None else by_type["Worker"])
            if role.replicas == 0:
                ctx.row((*role.path, "replicas"), DROPPED, "-", "0 replicas: no replicated job")
                continue
            is_trainer = role is trainer_role or (merged is not None and role.type == "Worker")
            fw_roles.append((rj, role.rt, role.replicas, int_port(info, role) if info.default_port else 0))
            rjobs.append(self._rjob(role, rj, is_trainer, command_override if is_trainer and merged else None))
            self.rjob_roles[rj] = role
        if info.framework in podenv.SCRIPTS:
            self._framework_env(rjobs, fw_roles)
        if info.kind == "MPIJob":
            rjobs.sort(key=lambda r: 0 if r["name"] == c.NODE else 1)  # node first: the launcher may depend on it
        ml: Obj = {"numNodes": 1 if info.kind == "MPIJob" else trainer_count}
        policy = {"PyTorchJob": "torch", "XGBoostJob": "xgboost", "JAXJob": "jax"}.get(info.kind)
        if policy:
            ml[policy] = {}
        if info.kind == "MPIJob":
            mpi: Obj = {
                "numProcPerNode": self.settings.slots if self.settings.slots is not None else 1,
                "mpiImplementation": self.settings.mpi_impl or "OpenMPI",
                "runLauncherAsNode": self.settings.launcher_as_node,
            }
            if self.settings.ssh_path:
                mpi["sshAuthMountPath"] = self.settings.ssh_path
            ml["mpi"] = mpi
        for k, rjob in enumerate(rjobs):
            self.runtime_sources.append(
                (
                    ("spec", "template", "spec", "replicatedJobs", k, "template", "spec", "template"),
                    (*self.rjob_roles[rjob["name"]].path, "template"),
                )
            )
        rt_spec: Obj = {"mlPolicy": ml}
        if self.settings.gang == "volcano":
            rt_spec["podGroupPolicy"] = {"volcano": {}}
        elif self.settings.gang == "coscheduling":
            rt_spec["podGroupPolicy"] = {
                "coscheduling": {"scheduleTimeoutSeconds": self.settings.schedule_timeout or 60}
            }
        js: Obj = {"replicatedJobs": rjobs}
        success = self._success(rjobs)
        if success:
            js["successPolicy"] = success
        template: Obj = {"spec": js}
        if self.settings.queue:
            template["metadata"] = {"annotations": {c.VOLCANO_QUEUE_ANNOTATION: self.settings.queue}}
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
            trainer: Obj = {"numNodes": n + 1 if self.settings.launcher_as_node else max(n, 1)}
            if workers:
                self.sources[("spec", "trainer", "numNodes")] = (*workers.path, "replicas")
        else:
            trainer = {"numNodes": trainer_count}
            self.sources[("spec", "trainer", "numNodes")] = (*trainer_role.path, "replicas")
            if self.settings.nproc is not None:
                trainer["numProcPerNode"] = self.settings.nproc
            compat, master_env = compat_env(
                info,
                self.roles,
                self.name,
                trainer_count,
                self.settings.nproc,
                c.NODE if merged or not separate else "master",
            )
            if master_env:
                for rjob in rjobs:
                    if rjob["name"] == "master":
                        cont = rjob["template"]["spec"]["template"]["spec"]["containers"]
                        main = next(x for x in cont if x.get("name") == c.NODE)
                        names = {e.get("name") for e in main.get("env") or []}
                        main["env"] = [*(main.get("env") or []), *(e for e in master_env if e["name"] not in names)]
                ctx.row(
                    (*by_type["Master"].path, "template"),
                    APPROXIMATED,
                    "runtime replicatedJobs[master]",
                    "Master and Worker differ beyond their command, so the Master runs as its own step: "
                    "the v2 policy env (and RANK) of the workers counts from 0 among workers (v1: 1..N)",
                )
            if (
                merged is not None
                and command_override
                and command_override[0]
                and command_override[0][:2] == ROLE_SWITCH[:2]
            ):
                compat.append(
                    {
                        "name": "KTRAIN_POD_INDEX",
                        "valueFrom": {"fieldRef": {"fieldPath": c.COMPLETION_INDEX_FIELD_PATH}},
                    }
                )
            if compat:
                trainer["env"] = compat
        spec["trainer"] = trainer
        return runtime

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
        for rj, main in mains:
            user_env = main.get("env") or []
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
            main["env"] = [*podenv.reference_env(), *user_env, *static]
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
                "by its host name where v1 gave it its pod IP; set command to get v1's exact values",
            )
        else:
            ctx.row(
                (*self.roles[0].path[:2],),
                KEPT,
                f"runtime containers node env {names}",
                "v1's values, with JobSet's host names (the kubelet fills in the JobSet name and pod index)",
            )

    def _mpi_env(self, rj: str) -> list[Obj]:
        """What mpi-operator v2beta1 (`mpi_job_controller.go` launcherEnvVars/workerEnvVars,
        intelEnvVars, mpichEnvVars, I_MPI_PERHOST) sets that v2's MPI policy does not: the OpenMPI
        variables v2 sets itself."""
        if self.api == V1:
            return []
        env = [{"name": "K_MPI_JOB_ROLE", "value": "launcher" if rj == c.LAUNCHER else "worker"}]
        if rj != c.LAUNCHER:
            return env
        hostfile = "/etc/mpi/hostfile"
        if self.settings.mpi_impl == "Intel":
            env += [
                {"name": "I_MPI_HYDRA_HOST_FILE", "value": hostfile},
                {"name": "I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS", "value": "-o ConnectionAttempts=10"},
                {"name": "I_MPI_PERHOST", "value": str(self.settings.slots if self.settings.slots is not None else 1)},
            ]
        elif self.settings.mpi_impl == "MPICH":
            env += [
                {"name": "HYDRA_HOST_FILE", "value": hostfile},
                {"name": "HYDRA_LAUNCH_EXTRA_ARGS", "value": "-o ConnectionAttempts=10"},
            ]
        return env

    def _success(self, rjobs: list[Obj]) -> Obj | None:
        names = [r["name"] for r in rjobs]
        if self.info.kind == "MPIJob" and c.LAUNCHER in names:
            return {"operator": "All", "targetReplicatedJobs": [c.LAUNCHER]}
        if self.info.kind in ("PyTorchJob", "XGBoostJob") and "master" in names:
            return {"operator": "All", "targetReplicatedJobs": ["master"]}  # v1: the Master's success
        if len(names) < 2:
            return None
        for first in ("chief", "master"):
            if self.info.kind == "TFJob" and first in names:
                return {"operator": "All", "targetReplicatedJobs": [first]}
        if c.NODE in names:
            return {"operator": "All", "targetReplicatedJobs": [c.NODE]}
        return None

    def _rjob(
        self, role: Role, rj: str, is_trainer: bool, command: tuple[list[Any] | None, list[Any] | None] | None
    ) -> Obj:
        ctx, info = self.ctx, self.info
        pod_template = copy.deepcopy(role.template)
        pod = pod_template["spec"]
        target = f"runtime replicatedJobs[{rj}]"
        if info.kind == "MPIJob":
            ctx.row(
                (*role.path, "replicas"),
                KEPT,
                "runtime mlPolicy.numNodes 1 (the launcher)" if rj == c.LAUNCHER else "TrainJob spec.trainer.numNodes",
            )
        else:
            ctx.row(
                (*role.path, "replicas"),
                KEPT,
                "TrainJob spec.trainer.numNodes" if is_trainer else f"{target} parallelism",
            )
        cont = pod["containers"][role.main]
        old = cont.get("name")
        cont["name"] = c.NODE
        if command is not None:
            cmd, args = command
            cont.pop("command", None)
            cont.pop("args", None)
            if cmd is not None:
                cont["command"] = cmd
            if args is not None:
                cont["args"] = args
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
                    (*role.path, "template", "spec", "containers", i), KEPT, f"{target} container {other.get('name')}"
                )
        for key in pod:
            if key != "containers":
                ctx.row((*role.path, "template", "spec", key), KEPT, f"{target} pod spec {key}")
        for key in pod_template.get("metadata") or {}:
            ctx.row((*role.path, "template", "metadata", key), KEPT, f"{target} pod template metadata.{key}")
        # Job pods may only be OnFailure or Never.
        restart = role.restart or role.default_restart
        p = (*role.path, "restartPolicy")
        unset = "" if role.restart else f" (unset: v1's default for a {info.kind} {role.type})"
        if restart == "Always":
            pod["restartPolicy"] = "OnFailure"
            ctx.row(p, APPROXIMATED, f"{target} pod restartPolicy OnFailure", "Job pods cannot be Always")
        elif restart == "ExitCode":
            pod["restartPolicy"] = "Never"
            ctx.row(
                p,
                APPROXIMATED,
                f"{target} pod restartPolicy Never",
                "failed pods are replaced up to the Job's backoffLimit whatever their exit code "
                "(v1 retried only exit codes 128-255)",
            )
        else:
            pod["restartPolicy"] = restart
            ctx.row(p, KEPT, f"{target} pod restartPolicy {restart}", unset.strip(" ()"))
        if pod.get("restartPolicy") == "Always":
            pod["restartPolicy"] = "OnFailure"
        mpi_env = self._mpi_env(rj) if info.kind == "MPIJob" else []
        if mpi_env:
            cont["env"] = [*(cont.get("env") or []), *mpi_env]
        if self.settings.priority_class and "priorityClassName" not in pod:
            pod["priorityClassName"] = self.settings.priority_class
        pod_template.pop("metadata", None) if not pod_template.get("metadata") else None
        job_spec: Obj = {"template": pod_template}
        if not is_trainer:
            job_spec["parallelism"] = role.replicas
            job_spec["completions"] = role.replicas
        if self.settings.backoff_limit is not None:
            job_spec["backoffLimit"] = self.settings.backoff_limit
        rjob: Obj = {"name": rj, "template": {"spec": job_spec}}
        if is_trainer:
            rjob["template"] = {"metadata": {"labels": {c.LABEL_ANCESTOR: c.ANCESTOR_TRAINER}}, "spec": job_spec}
        if info.kind == "MPIJob" and rj == c.LAUNCHER and self.settings.wait_workers:
            rjob["dependsOn"] = [{"name": c.NODE, "status": "Ready"}]
        return rjob
