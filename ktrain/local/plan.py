"""The pods of a rendered JobSet, as local processes (pure: no file system, processes or clock).

`plan_run` turns what `job render` prints into a `RunPlan`: every replicated job × replicas ×
completions as a `LocalPod`, each with the environment the kubelet would give its containers
(literal values and `$(VAR)` references, the completion index, the downward-API values a local
run can know, ConfigMap and Secret keys of the render), its working directory, command and args;
the order JobSet starts them in (`startupPolicy`, `dependsOn`) and the success policy that ends
the run. What differs from the cluster, on purpose:

- Host names. Every pod's name (`<jobset>-<rjob>-<j>-<p>.<subdomain>`, ENGINE.md §5.7) becomes
  127.0.0.1 and each (pod, port) a free port (`ktrain.local.netmap`), in env values, JSON in them
  (TF_CONFIG), command and args; an address computed inside the pod by a wrapper script that
  `export`s it is rewritten by `ktrain.local.shim` just before the program starts.
- Mounts. ConfigMap, Secret and projected volumes are files under the run's directory, emptyDir a
  directory per pod, a PersistentVolumeClaim one directory shared by the run's pods, a hostPath
  itself; a mount path written in env, command, args (scripts included) is replaced by where it
  is here. A path the program builds at run time is not seen (the documented limitation).
- MPI. The worker pods only run sshd for the launcher's `mpirun`: they are not started, and the
  hostfile becomes `localhost slots=N` (N = all slots), so mpirun starts every rank here.

In container mode (`PlanOptions.container`, `ktrain job run --local --container podman|docker`)
none of that rewriting happens: every pod is a container of its own image on a network of the run
where the pod's host names are aliases (`LocalPod.aliases`), and each volume is bind-mounted at its
real mount path (`LocalContainer.mounts`); `ktrain.local.containers` turns that into the engine's
`run` command. MPI worker pods run (their sshd), and the hostfile is left as it is.
"""

from __future__ import annotations

import base64
import json
import re
from typing import TYPE_CHECKING

from ktrain import constants as c
from ktrain.authoring.code_launch import is_wrapped, wrapper_words
from ktrain.engine.quantity import Quantity, QuantityError
from ktrain.errors import UsageError
from ktrain.local.expansion import expand
from ktrain.local.netmap import LOCALHOST, NETMAP_ENV, NetMap, Rewriter
from ktrain.local.run_plan import (  # the plan's types, here too: ktrain.local.plan.RunPlan & co.
    LocalContainer,
    LocalPod,
    Mount,
    PlannedFile,
    PlanOptions,
    RunPlan,
    Step,
)

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from ktrain.util.jsondata import Obj

SHIM_MODULE = "ktrain.local.shim"
SHELLS = ("sh", "/bin/sh", "bash", "/bin/bash", "/usr/bin/env")
MPI_SKIP_REASON = "MPI worker pods (sshd): mpirun starts every rank on this machine"
_HOSTFILE_LINE = re.compile(r"^\s*(\S+?)(?:\s+slots=(\d+)|:(\d+))?\s*$")


def ml_policy_of(runtime: Any) -> str | None:
    """The runtime's ML policy by name (`ktrain.api.runtime` model)."""
    policy = runtime.spec.ml_policy
    keys = policy.policy_keys if policy is not None else []
    return keys[0] if keys else None


def plan_run(objects: list[Obj], options: PlanOptions) -> RunPlan:
    jobsets = [o for o in objects if o.get("kind") == c.JOBSET_KIND]
    if len(jobsets) != 1:
        raise UsageError(f"a local run needs exactly one JobSet in the render, found {len(jobsets)}")
    if options.ml_policy == "flux" and not options.container:
        raise UsageError(
            "a Flux runtime cannot run as local processes: its pods start a Flux broker that an init "
            "container copies in from the Flux image, and the broker network spans the pods",
            hint="run it in containers (`--container podman|docker`) or on a cluster (`ktrain job create`)",
        )
    return _Planner(jobsets[0], objects, options).plan()


def _int(value: object, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _safe_relative(path: str, what: str) -> str:
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if path.startswith("/") or ".." in parts or not parts:
        raise UsageError(f"{what}: {path!r} must be a relative path without '..'")
    return "/".join(parts)


class _Planner:
    def __init__(self, jobset: Obj, objects: list[Obj], options: PlanOptions) -> None:
        self.js = jobset
        self.opt = options
        self.name: str = jobset["metadata"]["name"]
        self.namespace: str = jobset["metadata"].get("namespace") or "default"
        spec = jobset.get("spec") or {}
        self.spec: Obj = spec
        self.rjobs: list[Obj] = [r for r in spec.get("replicatedJobs") or [] if isinstance(r, dict)]
        self.config_maps = {o["metadata"]["name"]: o for o in objects if o.get("kind") == "ConfigMap"}
        self.secrets = {o["metadata"]["name"]: o for o in objects if o.get("kind") == "Secret"}
        subdomain = (spec.get("network") or {}).get("subdomain") or self.name
        self.netmap = NetMap(
            jobset=self.name, rjobs=[r["name"] for r in self.rjobs], subdomain=subdomain, namespace=self.namespace
        )
        self.rewriter = Rewriter(self.netmap, options.alloc_port)
        self.files: list[PlannedFile] = []
        self.dirs: list[str] = []
        self.volume_dirs: dict[str, str] = {}  # a shared volume's JSON -> its directory
        self.notes: list[str] = []
        self.hostfile_slots = 0
        self.shimmed: list[LocalContainer] = []
        self.launcher = any(r["name"] == c.LAUNCHER for r in self.rjobs)
        self.container = options.container
        self.read_only_dirs: set[str] = set()  # ConfigMap, Secret, projected and downwardAPI volumes

    # ------------------------------------------------------------------ structure

    def plan(self) -> RunPlan:
        total_jobs = sum(_int(r.get("replicas"), 1) for r in self.rjobs)
        skipped = {r["name"]: self._skip_reason(r) for r in self.rjobs}
        self._check_size(skipped)  # before anything is built per pod
        for rjob in self.rjobs:
            for j in range(_int(rjob.get("replicas"), 1)):
                for p in range(self._counts(rjob)[0]):
                    self.netmap.hosts.add(f"{self.name}-{rjob['name']}-{j}-{p}")
        # Ports the pods declare get theirs first, in pod order: the shim needs them all.
        for rjob in self.rjobs:
            if skipped[rjob["name"]] is not None or self.container:  # a container listens on its own port
                continue
            ports = sorted(
                {
                    _int(port.get("containerPort"), 0)
                    for ct in self._pod_spec(rjob).get("containers") or []
                    for port in ct.get("ports") or []
                }
                - {0}
            )
            for j in range(_int(rjob.get("replicas"), 1)):
                for p in range(self._counts(rjob)[0]):
                    for port in ports:
                        self.rewriter.port(f"{self.name}-{rjob['name']}-{j}-{p}", port)
        steps: list[Step] = []
        global_index = 0
        for rjob in self.rjobs:
            completions, parallelism = self._counts(rjob)
            replicas = _int(rjob.get("replicas"), 1)
            pods: list[LocalPod] = []
            if skipped[rjob["name"]] is None:
                for j in range(replicas):
                    for p in range(completions):
                        pods.append(self._pod(rjob, j, p, global_index + j, total_jobs))
            global_index += replicas
            depends = [
                (str(d.get("name")), str(d.get("status") or "Complete"))
                for d in rjob.get("dependsOn") or []
                if isinstance(d, dict)
            ]
            steps.append(
                Step(
                    name=rjob["name"],
                    replicas=replicas,
                    completions=completions,
                    parallelism=parallelism,
                    depends_on=depends,
                    pods=pods,
                    skipped=skipped[rjob["name"]],
                )
            )
        if self.shimmed:
            text = self.netmap.to_json()
            for container in self.shimmed:
                container.env[NETMAP_ENV] = text
        success = self.spec.get("successPolicy") or {}
        startup = self.spec.get("startupPolicy") or {}
        processes = sum(p.processes for s in steps for p in s.pods)
        if processes > self.opt.max_processes:
            count = sum(len(s.pods) for s in steps)
            self._too_many(processes, f"{count} pods, {processes // max(1, count)} per pod")
        if not any(s.pods for s in steps):  # `--nodes 0`: a run that would end at once, having run nothing
            raise UsageError(
                "the job runs no pod: every step has 0 pods (parallelism or completions 0)",
                hint="a local run needs at least one node: --nodes 1 or more",
            )
        images = sorted({ct.image for s in steps for p in s.pods for ct in [*p.init, *p.containers] if ct.image})
        self._network_note()
        return RunPlan(
            jobset=self.name,
            namespace=self.namespace,
            steps=steps,
            in_order=startup.get("startupPolicyOrder") == "InOrder",
            success_operator=str(success.get("operator") or "All"),
            success_targets=[str(t) for t in success.get("targetReplicatedJobs") or []],
            dirs=self.dirs,
            files=self.files,
            notes=self.notes,
            processes=processes,
            netmap=self.netmap,
            images=images,
            container=self.container,
            run_name=self.opt.run_dir.rstrip("/").rsplit("/", 1)[-1],
        )

    def _counts(self, rjob: Obj) -> tuple[int, int]:
        job = (rjob.get("template") or {}).get("spec") or {}
        parallelism = _int(job.get("parallelism"), 1)
        completions = _int(job.get("completions"), parallelism)
        return completions, max(1, min(parallelism, completions))

    def _pod_spec(self, rjob: Obj) -> Obj:
        spec: Obj = ((((rjob.get("template") or {}).get("spec") or {}).get("template") or {}).get("spec")) or {}
        return spec

    def _pod_meta(self, rjob: Obj) -> Obj:
        meta: Obj = (((rjob.get("template") or {}).get("spec") or {}).get("template") or {}).get("metadata") or {}
        return meta

    def _skip_reason(self, rjob: Obj) -> str | None:
        if self.opt.ml_policy == "mpi" and self.launcher and rjob["name"] == c.NODE and not self.container:
            return MPI_SKIP_REASON
        return None

    def _check_size(self, skipped: dict[str, str | None]) -> None:
        """Refuse a run that would start more processes than allowed, before building any pod."""
        pods = 0
        for rjob in self.rjobs:
            if skipped[rjob["name"]] is None:
                pods += _int(rjob.get("replicas"), 1) * self._counts(rjob)[0]
        if pods > self.opt.max_processes:
            self._too_many(pods, f"{pods} pods")

    def _too_many(self, n: int, what: str) -> None:
        raise UsageError(
            f"this run would start {n} local processes ({what}), more than --max-local-procs "
            f"{self.opt.max_processes} allows",
            hint=f"lower --nodes / --nproc-per-node, or pass --max-local-procs {n} if this machine can take it",
        )

    # ------------------------------------------------------------------ pods

    def _pod(self, rjob: Obj, j: int, p: int, global_index: int, total_jobs: int) -> LocalPod:
        rname = rjob["name"]
        hostname = f"{self.name}-{rname}-{j}-{p}"
        short = f"{rname}-{j}-{p}"
        spec = self._pod_spec(rjob)
        meta = self._pod_meta(rjob)
        keys = {
            c.JOBSET_NAME_LABEL: self.name,
            c.JOBSET_RJOB_NAME_LABEL: rname,
            c.JOBSET_JOB_INDEX_LABEL: str(j),
            "jobset.sigs.k8s.io/replicatedjob-replicas": str(_int(rjob.get("replicas"), 1)),
            "jobset.sigs.k8s.io/global-replicas": str(total_jobs),
            "jobset.sigs.k8s.io/job-global-index": str(global_index),
            "jobset.sigs.k8s.io/group-name": str(rjob.get("groupName") or "default"),
            "jobset.sigs.k8s.io/restart-attempt": str(self.opt.restart_attempt),
            c.JOB_COMPLETION_INDEX_ANNOTATION: str(p),
            "batch.kubernetes.io/job-name": f"{self.name}-{rname}-{j}",
            "job-name": f"{self.name}-{rname}-{j}",
        }
        labels = {**(meta.get("labels") or {}), **keys}
        annotations = {**(meta.get("annotations") or {}), **keys}
        # A container's address is the engine's choice, made when it starts: its host name (in its
        # /etc/hosts and on the run's network) stands for it.
        address = hostname if self.container else LOCALHOST
        fields = {
            "metadata.name": f"{hostname}-local",
            "metadata.namespace": self.namespace,
            "metadata.uid": f"local-{hostname}",
            "spec.nodeName": self.opt.node_name,
            "spec.serviceAccountName": str(spec.get("serviceAccountName") or "default"),
            "status.podIP": address,
            "status.podIPs": address,
            "status.hostIP": address,
            "status.hostIPs": address,
        }
        for key, value in labels.items():
            fields[f"metadata.labels['{key}']"] = str(value)
        for key, value in annotations.items():
            fields[f"metadata.annotations['{key}']"] = str(value)
        fields["metadata.labels"] = "\n".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
        fields["metadata.annotations"] = "\n".join(f'{k}="{v}"' for k, v in sorted(annotations.items()))
        volumes = self._volumes(spec, short, fields)
        pod_context = (short, hostname, fields, volumes)
        init = []
        for ct in spec.get("initContainers") or []:
            local = self._container(ct, spec, pod_context)
            local.sidecar = ct.get("restartPolicy") == "Always"
            init.append(local)
        containers = [self._container(ct, spec, pod_context) for ct in spec.get("containers") or []]
        processes = sum(self._processes(ct) for ct in [*containers, *(i for i in init if i.sidecar)])
        return LocalPod(
            name=short,
            hostname=hostname,
            rjob=rname,
            job_index=j,
            index=p,
            init=init,
            containers=containers,
            processes=processes,
            aliases=self._aliases(hostname) if self.container else [],
        )

    def _aliases(self, hostname: str) -> list[str]:
        """The names a pod answers to on the cluster (ENGINE.md §5.7): its own, with the subdomain
        and the namespace's service domain, and the subdomain itself (the headless Service, which
        resolves to every pod)."""
        sub, ns = self.netmap.subdomain, self.namespace
        names = [
            hostname,
            f"{hostname}.{sub}",
            f"{hostname}.{sub}.{ns}.svc",
            f"{hostname}.{sub}.{ns}.svc.cluster.local",
        ]
        return [*names, sub, f"{sub}.{ns}.svc", f"{sub}.{ns}.svc.cluster.local"]

    def _processes(self, ct: LocalContainer) -> int:
        """How many processes a container starts: torchrun's workers, mpirun's ranks, else one."""
        words = " ".join(ct.argv)
        if self.opt.ml_policy == "mpi" and ("mpirun" in words or "mpiexec" in words):
            return max(1, self.hostfile_slots)
        if "torchrun" in words or "torch.distributed.run" in words:
            nproc = ct.env.get("PET_NPROC_PER_NODE", "1")
            return self.opt.cpu_count if nproc == "auto" else _int(int(nproc) if nproc.isdigit() else 1, 1)
        return 1

    # ------------------------------------------------------------------ volumes

    def _volumes(self, spec: Obj, pod: str, fields: dict[str, str]) -> dict[str, str]:
        """volume name -> its directory (or file) here."""
        out: dict[str, str] = {}
        for volume in spec.get("volumes") or []:
            if not isinstance(volume, dict) or not isinstance(volume.get("name"), str):
                continue
            name = volume["name"]
            if "emptyDir" in volume:
                path = f"{self.opt.run_dir}/pods/{pod}/{name}"
                self.dirs.append(path)
            elif "persistentVolumeClaim" in volume:
                claim = str((volume["persistentVolumeClaim"] or {}).get("claimName") or name)
                path = f"{self.opt.run_dir}/claims/{_safe_relative(claim, 'claimName')}"
                if path not in self.dirs:
                    self.dirs.append(path)
            elif "hostPath" in volume:
                path = str((volume["hostPath"] or {}).get("path") or "/")
            elif any(k in volume for k in ("configMap", "secret", "projected", "downwardAPI")):
                path = self._content_volume(volume, pod, fields)
            else:
                kinds = sorted(set(volume) - {"name"})
                raise UsageError(
                    f"pod {pod}: volume {name} ({', '.join(kinds) or 'no source'}) cannot be mounted in a local run",
                    hint="a local run maps ConfigMap, Secret, projected, downwardAPI, emptyDir, "
                    "persistentVolumeClaim and hostPath volumes",
                )
            out[name] = path
        return out

    def _content_volume(self, volume: Obj, pod: str, fields: dict[str, str]) -> str:
        files: list[tuple[str, bytes, int]] = []
        per_pod = False
        if "configMap" in volume:
            files += self._source_files(volume["configMap"], "ConfigMap", volume)
        elif "secret" in volume:
            source = dict(volume["secret"] or {})
            source["name"] = source.get("secretName")
            files += self._source_files(source, "Secret", volume)
        elif "downwardAPI" in volume:
            per_pod = True
            files += self._downward_files(volume["downwardAPI"] or {}, fields, volume)
        else:
            projected = volume["projected"] or {}
            for src in projected.get("sources") or []:
                default = {"defaultMode": projected.get("defaultMode")}
                if "configMap" in src:
                    files += self._source_files({**default, **src["configMap"]}, "ConfigMap", volume)
                elif "secret" in src:
                    files += self._source_files({**default, **src["secret"]}, "Secret", volume)
                elif "downwardAPI" in src:
                    per_pod = True
                    files += self._downward_files({**default, **src["downwardAPI"]}, fields, volume)
                elif "serviceAccountToken" in src:
                    self._note_once("service account tokens are not mounted in a local run (no API server)")
        key = json.dumps(volume, sort_keys=True, default=str)
        if not per_pod and key in self.volume_dirs:
            return self.volume_dirs[key]
        base = f"{self.opt.run_dir}/volumes/{len(self.volume_dirs)}-{volume['name']}"
        if per_pod:
            base = f"{self.opt.run_dir}/pods/{pod}/{volume['name']}"
        else:
            self.volume_dirs[key] = base
        self.dirs.append(base)
        for rel, data, mode in files:
            self.files.append(PlannedFile(path=f"{base}/{rel}", data=data, mode=mode))
        self.read_only_dirs.add(base)  # the kubelet mounts these read-only
        return base

    def _source_files(self, source: Obj, kind: str, volume: Obj) -> list[tuple[str, bytes, int]]:
        name = str(source.get("name") or "")
        obj = (self.config_maps if kind == "ConfigMap" else self.secrets).get(name)
        if obj is None:
            if source.get("optional"):
                return []
            raise UsageError(
                f"volume {volume['name']} mounts {kind} {name or '(unnamed)'}, which this render does not "
                "make: a local run reads no objects from a cluster"
            )
        data: dict[str, bytes] = {}
        for key, value in (obj.get("data") or {}).items():
            data[key] = base64.b64decode(value) if kind == "Secret" else str(value).encode()
        for key, value in (obj.get("binaryData") or {}).items():
            data[key] = base64.b64decode(value)
        for key, value in (obj.get("stringData") or {}).items():
            data[key] = str(value).encode()
        default_mode = _int(source.get("defaultMode"), 0o644)
        items = source.get("items")
        out = []
        if items:
            for item in items:
                key = item.get("key")
                if key not in data:
                    if source.get("optional"):
                        continue
                    raise UsageError(f"volume {volume['name']}: {kind} {name} has no key {key!r}")
                rel = _safe_relative(str(item.get("path") or key), f"volume {volume['name']} item path")
                out.append((rel, self._content(data[key]), _int(item.get("mode"), default_mode)))
        else:
            for key in sorted(data):
                out.append((_safe_relative(key, f"{kind} {name} key"), self._content(data[key]), default_mode))
        return out

    def _downward_files(self, source: Obj, fields: dict[str, str], volume: Obj) -> list[tuple[str, bytes, int]]:
        default_mode = _int(source.get("defaultMode"), 0o644)
        out = []
        for item in source.get("items") or []:
            rel = _safe_relative(str(item.get("path") or ""), f"volume {volume['name']} item path")
            ref = item.get("fieldRef") or {}
            path = str(ref.get("fieldPath") or "")
            if path not in fields:
                raise UsageError(f"volume {volume['name']}: fieldPath {path!r} is not known in a local run")
            out.append((rel, fields[path].encode(), _int(item.get("mode"), default_mode)))
        return out

    def _content(self, data: bytes) -> bytes:
        """A file's content here: an MPI hostfile becomes this machine with every slot (not in
        containers, where the pods' names resolve)."""
        if self.container:
            return data
        hostfile = self._local_hostfile(data)
        return data if hostfile is None else hostfile

    def _local_hostfile(self, data: bytes) -> bytes | None:
        try:
            text = data.decode()
        except UnicodeDecodeError:
            return None
        lines = [line for line in text.splitlines() if line.strip()]
        if not lines:
            return None
        slots = 0
        colon = False
        for line in lines:
            m = _HOSTFILE_LINE.match(line)
            if m is None or self.rewriter.host_of(m.group(1)) is None:
                return None
            slots += int(m.group(2) or m.group(3) or 1)
            colon = colon or m.group(3) is not None
        self.hostfile_slots = slots
        self.notes.append(
            f"MPI: the hostfile lists {len(lines)} pods; here it is `localhost{':' if colon else ' slots='}{slots}`, "
            "so mpirun starts every rank on this machine"
        )
        return f"localhost:{slots}\n".encode() if colon else f"localhost slots={slots}\n".encode()

    # ------------------------------------------------------------------ containers

    def _container(
        self, ct: Obj, spec: Obj, pod_context: tuple[str, str, dict[str, str], dict[str, str]]
    ) -> LocalContainer:
        pod, hostname, fields, volumes = pod_context
        name = str(ct.get("name") or "")
        command = [str(w) for w in ct.get("command") or []]
        args = [str(w) for w in ct.get("args") or []]
        if self.container:
            return self._in_container(ct, spec, pod_context, command, args)
        if not command:
            image = ct.get("image") or "(no image)"
            hint = "give the command in the job (`-- COMMAND ...`), or run it in its image (`--container podman`)"
            if name in (c.DATASET_INITIALIZER, c.MODEL_INITIALIZER):
                hint = (
                    "the initializers download with their own image: run without --dataset/--model here, "
                    "or in the images (`--container podman`)"
                )
            raise UsageError(
                f"pod {pod}: container {name} runs its image's entrypoint ({image} gives no command): "
                "a local run starts commands on this machine and does not pull images",
                hint=hint,
            )
        env = self._env(ct, spec, pod, fields)
        argv = [expand(w, env) for w in [*command, *args]]
        mounts = self._mounts(ct, volumes, pod)
        paths = _path_rewriter(mounts)
        env = {k: paths(v) for k, v in env.items()}
        self.rewriter.self_host = hostname
        env = self.rewriter.rewrite_env(env)
        argv = self.rewriter.rewrite_args([paths(w) for w in argv])
        env.setdefault("HOSTNAME", hostname)
        if self.opt.ml_policy == "mpi" and self.launcher:
            self._mpi_env(env, argv)
        working = str(ct.get("workingDir") or "")
        cwd = paths(working) if working else None
        local = LocalContainer(
            name=name,
            argv=argv,
            env=env,
            cwd=cwd,
            image=str(ct.get("image") or ""),
            cwd_mapped=bool(working) and cwd != working,
        )
        if self._add_shim(local):
            self.shimmed.append(local)
        return local

    def _in_container(
        self,
        ct: Obj,
        spec: Obj,
        pod_context: tuple[str, str, dict[str, str], dict[str, str]],
        command: list[str],
        args: list[str],
    ) -> LocalContainer:
        """A container of its own image: the env, command and paths as the pod has them."""
        pod, _hostname, fields, volumes = pod_context
        name = str(ct.get("name") or "")
        image = str(ct.get("image") or "")
        if not image:
            raise UsageError(f"pod {pod}: container {name} has no image to run")
        env = self._env(ct, spec, pod, fields)
        # The kubelet expands $(VAR) in command and args; the image's own env is not known here.
        command = [expand(w, env) for w in command]
        args = [expand(w, env) for w in args]
        mounts = [
            Mount(source=local, target=path, read_only=read_only)
            for path, (local, read_only) in self._container_mounts(ct, volumes, pod).items()
        ]
        resources = ct.get("resources") or {}
        if resources.get("limits") or resources.get("requests"):
            self._note_once(
                "containers: resource requests and limits (CPU, memory, GPUs) are not applied; "
                "every container shares this machine"
            )
        return LocalContainer(
            name=name,
            argv=[*command, *args],
            env=env,
            cwd=str(ct.get("workingDir") or "") or None,
            image=image,
            command=command,
            args=args,
            mounts=mounts,
            pull_policy=str(ct.get("imagePullPolicy") or ""),
        )

    def _container_mounts(self, ct: Obj, volumes: dict[str, str], pod: str) -> dict[str, tuple[str, bool]]:
        """mount path -> (its source here, read-only), a subPath's directory made for the run."""
        out: dict[str, tuple[str, bool]] = {}
        files = {f.path for f in self.files}
        for mount in ct.get("volumeMounts") or []:
            path = str(mount.get("mountPath") or "")
            vol = str(mount.get("name") or "")
            if not path.startswith("/") or vol not in volumes:
                raise UsageError(f"pod {pod}: volumeMount {vol or '(unnamed)'} at {path or '(no path)'} is not valid")
            local = volumes[vol]
            read_only = bool(mount.get("readOnly")) or local in self.read_only_dirs
            sub = mount.get("subPath")
            if sub:
                local = f"{local}/{_safe_relative(str(sub), 'subPath')}"
                if local not in files and local not in self.dirs and volumes[vol].startswith(self.opt.run_dir):
                    self.dirs.append(local)  # the kubelet makes a subPath's directory
            out[path.rstrip("/") or "/"] = (local, read_only)
        if "/" in out:
            raise UsageError(f"pod {pod}: a volume mounted at / cannot be mounted in a container")
        return out

    def _mpi_env(self, env: dict[str, str], argv: list[str]) -> None:
        words = " ".join(argv)
        if "mpirun" not in words and "mpiexec" not in words:
            return
        # Every rank is on this machine: no ssh (Open MPI's isolated launcher, Hydra's fork).
        env.setdefault("OMPI_MCA_plm", "isolated")
        env.setdefault("HYDRA_LAUNCHER", "fork")
        env.setdefault("I_MPI_HYDRA_BOOTSTRAP", "fork")
        if self.opt.as_root:  # the pods' user is not root; here mpirun would refuse to start
            env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
            env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")

    def _add_shim(self, ct: LocalContainer) -> bool:
        """Put `python -m ktrain.local.shim` before the program a wrapper script `exec`s, when
        the script exports variables it computed (host names among them)."""
        layers = _wrapper_layers(ct.argv)
        exporting = [i for i, script in layers if "export " in script]
        if not exporting:
            return False
        at = exporting[-1]
        ct.argv = [*ct.argv[:at], self.opt.python, "-m", SHIM_MODULE, *ct.argv[at:]]
        return True

    def _mounts(self, ct: Obj, volumes: dict[str, str], pod: str) -> dict[str, str]:
        out: dict[str, str] = {}
        for mount in ct.get("volumeMounts") or []:
            path = str(mount.get("mountPath") or "")
            vol = str(mount.get("name") or "")
            if not path.startswith("/") or vol not in volumes:
                raise UsageError(f"pod {pod}: volumeMount {vol or '(unnamed)'} at {path or '(no path)'} is not valid")
            local = volumes[vol]
            sub = mount.get("subPath")
            if sub:
                local = f"{local}/{_safe_relative(str(sub), 'subPath')}"
            out[path.rstrip("/") or "/"] = local
        if "/" in out:
            raise UsageError(f"pod {pod}: a volume mounted at / cannot be mapped in a local run")
        return out

    # ------------------------------------------------------------------ env

    def _env(self, ct: Obj, spec: Obj, pod: str, fields: dict[str, str]) -> dict[str, str]:
        """The kubelet's makeEnvironmentVariables: envFrom, then env in order, each value
        expanded against the variables before it."""
        env: dict[str, str] = {}
        for source in ct.get("envFrom") or []:
            prefix = str(source.get("prefix") or "")
            for kind, key in (("ConfigMap", "configMapRef"), ("Secret", "secretRef")):
                ref = source.get(key)
                if ref is None:
                    continue
                obj = (self.config_maps if kind == "ConfigMap" else self.secrets).get(str(ref.get("name")))
                if obj is None:
                    if ref.get("optional"):
                        continue
                    raise self._missing(pod, f"envFrom {kind} {ref.get('name')}")
                for k, v in (obj.get("data") or {}).items():
                    env[prefix + k] = base64.b64decode(v).decode("utf-8", "replace") if kind == "Secret" else str(v)
                for k, v in (obj.get("stringData") or {}).items():
                    env[prefix + k] = str(v)
        for var in ct.get("env") or []:
            name = str(var.get("name") or "")
            source = var.get("valueFrom")
            if not source:
                env[name] = expand(str(var.get("value") or ""), env)
                continue
            value = self._value_from(source, ct, spec, pod, name, fields)
            if value is not None:
                env[name] = value
        # The Job controller gives every container of an Indexed Job its index (when not set).
        env.setdefault("JOB_COMPLETION_INDEX", fields[f"metadata.annotations['{c.JOB_COMPLETION_INDEX_ANNOTATION}']"])
        return env

    def _value_from(self, source: Obj, ct: Obj, spec: Obj, pod: str, name: str, fields: dict[str, str]) -> str | None:
        if source.get("fieldRef"):
            path = str(source["fieldRef"].get("fieldPath") or "")
            if path not in fields:
                raise UsageError(f"pod {pod}: env {name} reads fieldPath {path!r}, which a local run does not know")
            if self.container and path.startswith("status."):
                self._note_once(f"containers: {path} is the pod's host name here (its address is the engine's choice)")
            return fields[path]
        if source.get("resourceFieldRef"):
            return self._resource_value(source["resourceFieldRef"], ct, spec, pod, name)
        for kind, key in (("ConfigMap", "configMapKeyRef"), ("Secret", "secretKeyRef")):
            ref = source.get(key)
            if not ref:
                continue
            obj = (self.config_maps if kind == "ConfigMap" else self.secrets).get(str(ref.get("name")))
            data = (obj or {}).get("data") or {}
            if ref.get("key") not in data:
                if ref.get("optional"):
                    return None
                raise self._missing(pod, f"env {name}: {kind} {ref.get('name')} key {ref.get('key')!r}")
            raw = data[ref["key"]]
            return base64.b64decode(raw).decode("utf-8", "replace") if kind == "Secret" else str(raw)
        raise UsageError(f"pod {pod}: env {name} has a valueFrom a local run cannot read")

    def _missing(self, pod: str, what: str) -> UsageError:
        return UsageError(
            f"pod {pod}: {what} is not in this render: a local run reads no objects from a cluster",
            hint="give the value with --env NAME=VALUE",
        )

    def _resource_value(self, ref: Obj, ct: Obj, spec: Obj, pod: str, name: str) -> str:
        """resourceFieldRef: the container's limit (else what this machine has), over divisor."""
        target = ct
        if ref.get("containerName"):
            target = next(
                (
                    x
                    for x in [*(spec.get("containers") or []), *(spec.get("initContainers") or [])]
                    if x.get("name") == ref["containerName"]
                ),
                ct,
            )
        resource = str(ref.get("resource") or "")
        kind, _, res = resource.partition(".")
        if kind not in ("limits", "requests") or not res:
            raise UsageError(f"pod {pod}: env {name} reads resource {resource!r}, which a local run does not know")
        resources = target.get("resources") or {}
        raw = (resources.get(kind) or {}).get(res)
        if raw is None and kind == "requests":
            raw = (resources.get("limits") or {}).get(res)
        try:
            if raw is None:  # no limit: the node's allocatable, here this machine's
                amount = Quantity.parse(
                    str(self.opt.cpu_count) if res == "cpu" else str(self.opt.memory_bytes) if res == "memory" else "0"
                )
            else:
                amount = Quantity.parse(raw)
            divisor = Quantity.parse(ref.get("divisor") or "1")
        except QuantityError as exc:
            raise UsageError(f"pod {pod}: env {name}: {exc}") from None
        if divisor.is_zero():
            divisor = Quantity.parse("1")
        num, den = amount.milli_value(), divisor.milli_value()
        return str(-(-num // den))

    # ------------------------------------------------------------------ notes

    def _note_once(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def _network_note(self) -> None:
        met = sorted(self.rewriter.rewritten)
        if not met and not self.shimmed:
            return
        example = f"{met[0]}.{self.netmap.subdomain}" if met else f"{self.name}-<rjob>-<j>-<p>.{self.netmap.subdomain}"
        hosts = set(met)
        ports = sorted(
            {int(key.rsplit(":", 1)[1]) for key in self.netmap.ports if self.shimmed or key.rsplit(":", 1)[0] in hosts}
        )
        self.notes.append(
            f"network: pod host names ({example}"
            + (f" and {len(met) - 1} more" if len(met) > 1 else "")
            + f") are {LOCALHOST} here, and each pod's port"
            + (f" ({', '.join(map(str, ports))})" if ports else "")
            + " a free port of its own: the values that name them are rewritten"
        )


def _wrapper_layers(argv: list[str]) -> list[tuple[int, str]]:
    """`sh -c SCRIPT NAME PROGRAM...` layers whose script ends in `exec "$@"`: (where PROGRAM
    starts, SCRIPT), outermost first (the `--code` wrapper around a framework wrapper). The
    `--code`/`--pip` wrapper takes its own arguments before the program's (`wrapper_words`)."""
    out = []
    start = 0
    while True:
        rest = argv[start:]
        if is_wrapped(rest):
            words = wrapper_words(rest)
            out.append((start + words, rest[2]))
            start += words
        elif len(rest) >= 5 and rest[0] in SHELLS and rest[1] == "-c" and 'exec "$@"' in rest[2]:
            out.append((start + 4, rest[2]))
            start += 4
        elif len(rest) >= 4 and rest[1:3] == ["-m", SHIM_MODULE]:
            start += 3
        else:
            return out


def programs(argv: list[str]) -> list[str]:
    """The programs a container runs: its command, and what each wrapper layer `exec`s."""
    found = [argv[0]] if argv else []
    for start, _script in _wrapper_layers(argv):
        rest = argv[start:]
        if len(rest) >= 3 and rest[1:3] == ["-m", SHIM_MODULE]:
            rest = rest[3:]
        if rest:
            found.append(rest[0])
    return found


def _path_rewriter(mounts: dict[str, str]) -> Callable[[str], str]:
    """Replaces each mount path where it appears as a path (at a word or quote boundary)."""
    if not mounts:
        return lambda text: text
    ordered = sorted(mounts, key=len, reverse=True)
    pattern = re.compile(
        r"(?<![A-Za-z0-9._/-])(" + "|".join(re.escape(p) for p in ordered) + r")(?=/|$|[^A-Za-z0-9._-])"
    )

    def rewrite(text: str) -> str:
        if "/" not in text:
            return text
        return pattern.sub(lambda m: mounts[m.group(1)], text)

    return rewrite
