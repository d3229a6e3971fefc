"""What each pod of a rendered JobSet sees: its main container's env and the program it runs.

- JobSet (v0.12.0 `pkg/controllers/jobset_controller.go`, ENGINE.md §5.7) makes `replicas` Jobs
  per replicated job, named `<jobset>-<rjob>-<j>`, and labels their pods
  `jobset.sigs.k8s.io/{jobset-name, replicatedjob-name, job-index, job-global-index}` (the global
  index counts the Jobs of every earlier replicated job first); pods are reachable as
  `<jobset>-<rjob>-<j>-<i>.<subdomain>` (the subdomain defaults to the JobSet's name).
- An Indexed Job gives pod i the annotation (and label) `batch.kubernetes.io/job-completion-index`.
- The kubelet resolves `valueFrom.fieldRef` from the pod, then expands `$(VAR)` in later values,
  in `command` and in `args` from the variables defined before (`$$` is a literal `$`, an unknown
  name stays as written: k8s.io/kubernetes third_party/forked/golang/expansion), and keeps the
  last of two variables with the same name.
- A container started through one of ktrain's shell wrappers (the TensorFlow/PaddlePaddle/MXNet
  env wrapper, the Master/Worker switch) is run for real with `/bin/sh`, its program replaced by
  a stub that records the argv and env it is given.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from dataclasses import dataclass, field
from typing import Any

from ktrain import constants as c
from ktrain.convert import podenv
from ktrain.convert.layout import ROLE_SWITCH

Obj = dict[str, Any]

GLOBAL_INDEX = "jobset.sigs.k8s.io/job-global-index"


@dataclass
class Pod:
    rjob: str
    job_index: int
    index: int  # completion index
    global_index: int
    host: str
    ip: str
    template: Obj  # the pod template
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)


@dataclass
class Seen:
    env: dict[str, str]
    program: list[str]
    entrypoint: bool
    wrapped: bool = False  # ran through one of ktrain's shell wrappers


def jobset_pods(jobset: Obj) -> list[Pod]:
    name = jobset["metadata"]["name"]
    spec = jobset["spec"]
    subdomain = (spec.get("network") or {}).get("subdomain") or name
    pods = []
    global_index = 0
    for rjob in spec["replicatedJobs"]:
        job_spec = rjob["template"]["spec"]
        count = job_spec.get("parallelism") or 1
        for j in range(rjob.get("replicas", 1)):
            for i in range(count):
                template = job_spec["template"]
                meta = template.get("metadata") or {}
                jobset_keys = {
                    c.JOBSET_NAME_LABEL: name,
                    c.JOBSET_RJOB_NAME_LABEL: rjob["name"],
                    c.JOBSET_JOB_INDEX_LABEL: str(j),
                    GLOBAL_INDEX: str(global_index),
                    c.JOB_COMPLETION_INDEX_ANNOTATION: str(i),
                }
                pods.append(
                    Pod(
                        rjob["name"],
                        j,
                        i,
                        global_index,
                        f"{name}-{rjob['name']}-{j}-{i}.{subdomain}",
                        f"10.{global_index // 250}.{global_index % 250}.{i + 1}",
                        template,
                        {**(meta.get("labels") or {}), **jobset_keys},
                        {**(meta.get("annotations") or {}), **jobset_keys},
                    )
                )
            global_index += 1
    return pods


def expand(text: str, env: dict[str, str]) -> str:
    """The kubelet's `$(VAR)` expansion."""
    out = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "$" and i + 1 < len(text):
            nxt = text[i + 1]
            if nxt == "$":
                out.append("$")
                i += 2
                continue
            if nxt == "(":
                end = text.find(")", i + 2)
                if end != -1:
                    var = text[i + 2 : end]
                    out.append(env[var] if var in env else text[i : end + 1])
                    i = end + 1
                    continue
        out.append(ch)
        i += 1
    return "".join(out)


def field_value(pod: Pod, path: str) -> str:
    if path == "status.podIP":
        return pod.ip
    if path == "metadata.name":  # the Job controller's generateName: `<job name>-<index>-` + 5 random
        return pod.host.split(".")[0] + "-r4nd5"
    for prefix, table in (("metadata.labels['", pod.labels), ("metadata.annotations['", pod.annotations)):
        if path.startswith(prefix):
            return table.get(path[len(prefix) : -2], "")
    raise AssertionError(f"a fieldRef this model does not know: {path}")


def container_env(pod: Pod, container: Obj) -> dict[str, str]:
    env: dict[str, str] = {}
    for item in container.get("env") or []:
        source = item.get("valueFrom")
        if source is None:
            env[item["name"]] = expand(str(item.get("value", "")), env)
        elif "fieldRef" in source:
            env[item["name"]] = field_value(pod, source["fieldRef"]["fieldPath"])
        else:
            env[item["name"]] = "<" + ",".join(sorted(source)) + ">"
    return env


def main_container(pod: Pod) -> Obj:
    containers = pod.template["spec"]["containers"]
    return next(ct for ct in containers if ct.get("name") == c.NODE)


STUB = """#!/bin/sh
printf '%s\\0' "$@" > "$KTRAIN_STUB_OUT.argv"
env -0 > "$KTRAIN_STUB_OUT.env"
"""


def seen(pod: Pod) -> Seen:
    container = main_container(pod)
    env = container_env(pod, container)
    command = [expand(str(x), env) for x in container.get("command") or []]
    args = [expand(str(x), env) for x in container.get("args") or []]
    if podenv.is_wrapper(command):
        return _run(command, ["{stub}", *args], env)
    if command[:4] == ROLE_SWITCH:
        n = int(command[4])
        master, worker = command[5 : 5 + n], command[5 + n :]
        return _run(command[:4], [str(n + 1), "{stub}", *master, "{stub}", *worker, *args], env)
    return Seen(env, [*command, *args], not command)


def _run(command: list[str], rest: list[str], env: dict[str, str]) -> Seen:
    with tempfile.TemporaryDirectory() as tmp:
        stub = os.path.join(tmp, "stub")
        with open(stub, "w") as fh:
            fh.write(STUB)
        os.chmod(stub, 0o755)
        out = os.path.join(tmp, "out")
        argv = [*command, *(stub if a == "{stub}" else a for a in rest)]
        run_env = {**env, "PATH": "/usr/bin:/bin", "KTRAIN_STUB_OUT": out}
        subprocess.run(argv, env=run_env, check=True, capture_output=True)
        with open(out + ".argv", "rb") as fh:
            program = [a.decode() for a in fh.read().split(b"\0")[:-1]]
        with open(out + ".env", "rb") as fh:
            items = [item.decode().split("=", 1) for item in fh.read().split(b"\0") if item]
    got = {k: v for k, v in items if k not in ("PATH", "PWD", "SHLVL", "_", "KTRAIN_STUB_OUT")}
    return Seen(got, program, False, wrapped=True)
