"""Where each v1 replica runs under JobSet (the `Plan`), decided once for both ways of carrying a
job, and v1 host names in commands, args and env values rewritten to JobSet's.

- PyTorch and XGBoost Master + Worker whose pod templates differ only in command/args: one
  `node` step, node 0 runs the Master (v1's rank 0), nodes 1..N the Workers (ranks 1..N).
- Master + Worker with other differences: a `master` step (one pod), then a `node` step of one
  Job per Worker, so the Jobs' global indexes are 1..N: v1's ranks again.
- MPIJob: `launcher` and `node`. Every other kind: the trainer's replica type runs as `node`
  (Worker first), each other type as its own step named after it.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from typing import Any

from ktrain import constants as c
from ktrain.convert.common import Role
from ktrain.convert.compat import Layout, Placement
from ktrain.convert.kinds import KindInfo
from ktrain.convert.pod_labels import PER_ROLE, reads
from ktrain.inputs.documents import Path

MERGING_KINDS = ("PyTorchJob", "XGBoostJob")
TRAINER_ORDER = {
    "MPIJob": ("Launcher",),
    "TFJob": ("Worker", "Chief", "Master", "PS", "Evaluator"),
    "MXJob": ("Worker", "Scheduler", "Server", "Tuner", "TunerServer", "TunerTracker"),
}

_ROLE_SWITCH_SCRIPT = """n=$1; shift; all=$#
if [ "$KTRAIN_POD_INDEX" -eq 0 ]; then
  i=0
  for a do
    if [ "$i" -lt "$n" ]; then set -- "$@" "$a"; fi
    i=$((i + 1))
  done
  shift "$all"
else
  shift "$n"
fi
exec "$@"
"""
# Node 0 runs the Master's command, the others the Worker's:
# [sh, -c, SCRIPT, ktrain-role, <len(master)>, *master, *worker].
ROLE_SWITCH = ["/bin/sh", "-c", _ROLE_SWITCH_SCRIPT, "ktrain-role"]


@dataclass
class Plan:
    layout: Layout
    trainer: Role  # the replica type whose step carries the TrainJob's trainer
    merged: bool = False  # Master is node 0 of the Workers' step
    separate: bool = False  # Master and Worker in two steps, one Job per Worker
    command: list[Any] | None = None  # the merged step's command and args
    args: list[Any] | None = None
    problem: str = ""  # why Master and Worker cannot share a step


def same_but_command(a: Role, b: Role) -> bool:
    ta, tb = copy.deepcopy(a.template), copy.deepcopy(b.template)
    for t, r in ((ta, a), (tb, b)):
        cont = t["spec"]["containers"][r.main]
        cont.pop("command", None)
        cont.pop("args", None)
    return bool(ta == tb)


def merged_command(master: Role, worker: Role) -> tuple[list[Any] | None, list[Any] | None, str | None]:
    """(command, args, problem) for one `node` step running both v1 roles: identical, or a
    shell switch that runs the Master's command on node 0 (v1's rank 0)."""
    mc, wc = master.container, worker.container
    if (mc.get("command"), mc.get("args")) == (wc.get("command"), wc.get("args")):
        return mc.get("command"), mc.get("args"), None
    if not mc.get("command") or not wc.get("command"):
        return None, None, "Master and Worker run different args on the image's entrypoint"
    m = [*mc["command"], *(mc.get("args") or [])]
    w = [*wc["command"], *(wc.get("args") or [])]
    return [*ROLE_SWITCH, str(len(m)), *m, *w], None, None


def trainer_role(info: KindInfo, roles: list[Role]) -> Role:
    by_type = {r.type: r for r in roles}
    for t in TRAINER_ORDER.get(info.kind, ("Worker", "Master")):
        if t in by_type:
            return by_type[t]
    return roles[0]


def plan(info: KindInfo, roles: list[Role]) -> Plan:
    by_type = {r.type: r for r in roles}
    if info.kind == "MPIJob":
        layout = {r.type: Placement(c.LAUNCHER if r.type == "Launcher" else c.NODE) for r in roles}
        return Plan(layout, trainer_role(info, roles))
    if info.kind in MERGING_KINDS and "Master" in by_type and "Worker" in by_type:
        master, worker = by_type["Master"], by_type["Worker"]
        problem = "the Master and Worker pod templates differ"
        per_role = reads(master.template, PER_ROLE) | reads(worker.template, PER_ROLE)
        if per_role:
            # pod_labels.carry: a label whose value differs between Master and Worker needs its own step
            problem = f"the pods read v1's {', '.join(sorted(per_role))} label, which differs between Master and Worker"
        elif master.replicas == 1 and same_but_command(master, worker):
            command, args, why = merged_command(master, worker)
            if why is None:
                layout = {"Master": Placement(c.NODE), "Worker": Placement(c.NODE, offset=master.replicas)}
                return Plan(layout, worker, merged=True, command=command, args=args)
            problem = why
        layout = {"Master": Placement("master"), "Worker": Placement(c.NODE, per_job=True)}
        return Plan(layout, master, separate=True, problem=problem)
    trainer = trainer_role(info, roles)
    layout = {r.type: Placement(c.NODE if r is trainer else r.rt) for r in roles}
    return Plan(layout, trainer)


# --------------------------------------------------------------------------- host names


@dataclass
class HostRewrite:
    path: Path  # of the string, relative to the replica spec's template
    old: str
    new: str
    known: bool  # False: it names a v1 replica this job does not have (left as written)


def _host_pattern(name: str, types: list[str]) -> re.Pattern[str]:
    alternatives = "|".join(re.escape(t) for t in sorted(types, key=len, reverse=True))
    n = re.escape(name)
    label = r"[a-z0-9](?:[-a-z0-9]*[a-z0-9])?"
    return re.compile(
        rf"(?<![A-Za-z0-9.-]){n}-(?P<rt>{alternatives})(?:-(?P<i>\d+))?"
        rf"(?:\.{n}(?:-worker)?)?(?P<tail>(?:\.{label})?\.svc(?:\.cluster\.local)?)?(?![A-Za-z0-9-])"
    )


def rewrite_hosts(roles: list[Role], name: str, layout: Layout) -> list[tuple[Role, list[HostRewrite]]]:
    """Each role with v1 host names in its containers' command, args and env values replaced by
    JobSet's: `<job>-<type>-<i>` (training-operator's per-pod Services, and mpi-operator's
    `<job>-worker-<i>.<job>` or `.<job>-worker` subdomains; a namespace and `.svc` suffix is
    kept), and an MPI `<job>-launcher`."""
    counts = {r.rt: r.replicas for r in roles}
    places = {r.rt: layout[r.type] for r in roles if r.type in layout}
    if not places:
        return [(r, []) for r in roles]
    pattern = _host_pattern(name, list(places))
    out = []
    for role in roles:
        changes: list[HostRewrite] = []
        template = copy.deepcopy(role.template)

        def fix(value: str, path: Path, changes: list[HostRewrite] = changes) -> str:
            def one(m: re.Match[str]) -> str:
                rt, index, tail = m.group("rt"), m.group("i"), m.group("tail") or ""
                if (index is None) != (rt == "launcher"):
                    return m.group(0)  # `<job>-worker` (a Service), `<job>-launcher-0`: not v1 pod names
                k = int(index or 0)
                if k >= counts.get(rt, 0):
                    changes.append(HostRewrite(path, m.group(0), m.group(0), known=False))
                    return m.group(0)
                new = places[rt].host(name, k) + tail
                changes.append(HostRewrite(path, m.group(0), new, known=True))
                return new

            return pattern.sub(one, value)

        for key in ("initContainers", "containers"):
            for i, cont in enumerate((template.get("spec") or {}).get(key) or []):
                if not isinstance(cont, dict):
                    continue
                base: Path = ("spec", key, i)
                for fld in ("command", "args"):
                    items = cont.get(fld)
                    if isinstance(items, list):
                        cont[fld] = [fix(v, (*base, fld, j)) if isinstance(v, str) else v for j, v in enumerate(items)]
                for j, env in enumerate(cont.get("env") or []):
                    if isinstance(env, dict) and isinstance(env.get("value"), str):
                        env["value"] = fix(env["value"], (*base, "env", j, "value"))
        if changes:
            role = Role(role.type, role.replicas, role.restart, template, role.path, role.main, role.default_restart)
        out.append((role, changes))
    return out


def host_rows(role: Role, changes: list[HostRewrite]) -> list[tuple[Path, bool, str]]:
    """(path, known, note) report rows for one role's rewrites."""
    rows = []
    for ch in changes:
        path = (*role.path, "template", *ch.path)
        if ch.known:
            rows.append((path, True, f"v1 host name {ch.old} is {ch.new} under JobSet"))
        else:
            rows.append((path, False, f"names {ch.old}, which this job does not have: left as written"))
    return rows
