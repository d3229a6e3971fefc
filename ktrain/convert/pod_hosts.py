"""A pod's own name used as its host name.

training-operator gave every pod a Service of the pod's own name (`pkg/controller.v1/common/service.go`
CreateNewService: `<job>-<type>-<index>`, the pod's name too), and mpi-operator named each worker pod
after its host name in the workers' Service (`newWorker`: hostname `<job>-worker-<i>`, subdomain
`<job>-worker`). So `$(POD_NAME)` from the downward API (`fieldRef: metadata.name`), or the shell's
`$HOSTNAME`, resolved in DNS: `torchrun --local_addr=$(POD_NAME)`, `--rdzv_endpoint=$POD_NAME:29400`.
A JobSet pod's name ends in 5 random characters and resolves nowhere; its resolvable name is
`<jobset>-<rjob>-<job index>-<pod index>.<subdomain>` (the Job's pod hostname under the JobSet's
headless Service, whose name, the subdomain, is the JobSet's), which the downward API builds from
the labels and annotations JobSet and the Job controller put on the pod
(`jobset.sigs.k8s.io/jobset-name`, `jobset.sigs.k8s.io/job-index`,
`batch.kubernetes.io/job-completion-index`; the replicated job's name is known per step).

Each such reference where a host is expected (after `--...addr=`, `host`, `endpoint`, `master`, ...,
before `:port`, as a whole value of an env var named like a host) is rewritten to
`$(KTRAIN_POD_HOST)` (or `$KTRAIN_POD_HOST` in a shell script), defined first in the container's env;
the other uses keep the name and are reported, as is every env var that holds the pod's name.
"""

from __future__ import annotations

import copy
import re

from ktrain import constants as c
from ktrain.convert.common import Ctx, Role
from ktrain.convert.compat import Layout, Placement
from ktrain.convert.kinds import KindInfo
from ktrain.convert.report import APPROXIMATED, KEPT
from ktrain.inputs.documents import Path
from ktrain.util.jsondata import Obj

HOST_VAR = "KTRAIN_POD_HOST"
SHELL_HOSTNAME = "HOSTNAME"  # the container's host name: v1's pod name (a Service of that name)
_HOSTISH = r"(?:addr(?:ess)?|host(?:name)?|endpoint|master|coordinator|server|url|uri|peer|ip)"
_OPTION_BEFORE = re.compile(rf"(?i)(?:^|[\s\"'])--?[\w.-]*{_HOSTISH}[\w.-]*(?:\s*=\s*|\s+)[\"']?$")
_ASSIGN_BEFORE = re.compile(rf"(?i)(?:^|[\s;\"'])[\w]*{_HOSTISH}\w*=[\"']?$")
_OPTION_ITEM = re.compile(rf"(?i)^--?[\w.-]*{_HOSTISH}[\w.-]*$")
_ENV_NAME = re.compile(rf"(?i){_HOSTISH}")
_PORT_AFTER = re.compile(r"^:(?:\d|\$)")


def _references(var: str, shell: bool) -> re.Pattern[str]:
    forms = [rf"(?<!\$)\$\({re.escape(var)}\)"]
    if shell:
        forms += [rf"\$\{{{re.escape(var)}\}}", rf"\${re.escape(var)}(?![A-Za-z0-9_])"]
    return re.compile("|".join(forms))


def _host_context(before: str, after: str, prev_item: str | None, env_name: str | None) -> bool:
    if _PORT_AFTER.match(after) or _OPTION_BEFORE.search(before) or _ASSIGN_BEFORE.search(before):
        return True
    whole = not before.strip("\"' ") and not after.strip("\"' ")
    if whole and prev_item is not None and _OPTION_ITEM.match(prev_item.strip()):
        return True
    return whole and env_name is not None and bool(_ENV_NAME.search(env_name))


def host_value(place: Placement) -> list[Obj]:
    """KTRAIN_POD_HOST and the downward-API values it is built from (defined before it)."""

    def field(name: str, path: str) -> Obj:
        return {"name": name, "valueFrom": {"fieldRef": {"fieldPath": path}}}

    # Names of their own: the env wrappers define KTRAIN_JOBSET and KTRAIN_POD_INDEX too.
    env = [
        field("KTRAIN_HOST_JOBSET", f"metadata.labels['{c.JOBSET_NAME_LABEL}']"),
        field("KTRAIN_HOST_POD_INDEX", c.COMPLETION_INDEX_FIELD_PATH),
    ]
    job = "0"
    if place.per_job:
        env.append(field("KTRAIN_HOST_JOB_INDEX", f"metadata.labels['{c.JOBSET_JOB_INDEX_LABEL}']"))
        job = "$(KTRAIN_HOST_JOB_INDEX)"
    value = f"$(KTRAIN_HOST_JOBSET)-{place.rjob}-{job}-$(KTRAIN_HOST_POD_INDEX).$(KTRAIN_HOST_JOBSET)"
    env.append({"name": HOST_VAR, "value": value})
    return env


class _Rewriter:
    def __init__(self, variables: list[str]) -> None:
        self.variables = variables
        self.changed: list[tuple[Path, str, str]] = []
        self.kept: set[str] = set()  # variables used elsewhere than as a host

    def text(self, value: str, at: Path, *, shell: bool, prev: str | None = None, env: str | None = None) -> str:
        for var in [*self.variables, SHELL_HOSTNAME] if shell else self.variables:
            pattern = _references(var, shell)

            def one(m: re.Match[str], value: str = value, var: str = var) -> str:
                if not _host_context(value[: m.start()], value[m.end() :], prev, env):
                    self.kept.add(var)
                    return m.group(0)
                kubelet = m.group(0).startswith("$(")
                braced = m.group(0).startswith("${")
                return f"$({HOST_VAR})" if kubelet else "${" + HOST_VAR + "}" if braced else f"${HOST_VAR}"

            new = pattern.sub(one, value)
            if new != value:
                self.changed.append((at, value, new))
                value = new
        return value


def pod_name_hosts(ctx: Ctx, info: KindInfo, roles: list[Role], name: str, layout: Layout) -> list[Role]:
    """Each role with the uses of its pod's name as a host rewritten (a copy; rows for each)."""
    out = []
    for role in roles:
        place = layout.get(role.type)
        template = copy.deepcopy(role.template)
        changed = False
        for key, i, cont in _containers(template):
            base: Path = (*role.path, "template", "spec", key, i)
            if place is not None and _rewrite_container(ctx, cont, base, place):
                changed = True
        out.append(
            Role(role.type, role.replicas, role.restart, template, role.path, role.main, role.default_restart)
            if changed
            else role
        )
    return out


def _rewrite_container(ctx: Ctx, cont: Obj, base: Path, place: Placement) -> bool:
    env = [e for e in cont.get("env") or [] if isinstance(e, dict)]
    variables = [
        str(e.get("name"))
        for e in env
        if ((e.get("valueFrom") or {}).get("fieldRef") or {}).get("fieldPath") == "metadata.name"
    ]
    rw = _Rewriter(variables)
    for fld in ("command", "args"):
        items = cont.get(fld)
        if not isinstance(items, list):
            continue
        for j, item in enumerate(items):
            if isinstance(item, str):
                prev = items[j - 1] if j and isinstance(items[j - 1], str) else None
                items[j] = rw.text(item, (*base, fld, j), shell=True, prev=prev)
    for j, item in enumerate(cont.get("env") or []):
        if isinstance(item, dict) and isinstance(item.get("value"), str):
            item["value"] = rw.text(item["value"], (*base, "env", j, "value"), shell=False, env=str(item.get("name")))
    for j, item in enumerate(cont.get("env") or []):
        if isinstance(item, dict) and str(item.get("name")) in variables:
            ctx.row(
                (*base, "env", j),
                APPROXIMATED,
                "-",
                f"{item.get('name')} is the JobSet pod's name (<jobset>-<rjob>-<job>-<index>-<5 random characters>), "
                "not v1's <job>-<type>-<index>, and does not resolve as a host name as v1's did (its per-pod Service)"
                + (f"; its uses as a host read {HOST_VAR} instead" if rw.changed else "")
                + ("" if not rw.kept - {SHELL_HOSTNAME} else "; its other uses keep the pod's name"),
            )
    if not rw.changed:
        return False
    cont["env"] = [*host_value(place), *(cont.get("env") or [])]
    for at, old, new in rw.changed:
        ctx.row(
            at,
            KEPT,
            "host name rewritten",
            f"the pod's own name as a host ({old!r}): v1's pod name had a Service of its own and resolved; the "
            f"JobSet pod's does not, so it reads {HOST_VAR}, <jobset>-{place.rjob}-<job>-<index>.<jobset> from the "
            f"downward API ({new!r})",
        )
    return True


def _containers(template: Obj) -> list[tuple[str, int, Obj]]:
    spec = template.get("spec") or {}
    return [
        (key, i, cont)
        for key in ("initContainers", "containers")
        for i, cont in enumerate(spec.get(key) or [])
        if isinstance(cont, dict)
    ]
