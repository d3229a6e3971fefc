"""What happens when a run fails or is preempted: `--max-restarts`, `--restart-on-preemption`,
`--fail-on-exit-code`, `--restart-strategy`, `--ttl` and `--checkpoint` (issue #35; the
reasoning is in docs/failure-policy.md).

JobSet v0.12 has every mechanism and the TrainJob API (Trainer v2.3) none of them, so ktrain
writes them onto the JobSet it renders, as kubeflow/trainer KEP-4162 ("TrainJob Failure Policy")
proposes the Trainer controller would:

- `failurePolicy.maxRestarts` is the budget. With it every replicated Job gets `backoffLimit: 0`
  and pods `restartPolicy: Never`, so a failed pod fails its Job at once and the decision is
  taken once, by JobSet (with Job retries a crash would be retried up to six times inside each
  attempt and never reach the budget). `--elastic` keeps the runtime's `backoffLimit`: there a
  lost node's pod is replaced and rejoins torchrun's rendezvous.
- `--restart-on-preemption` and `--fail-on-exit-code` are the pattern JobSet's KEP-262 documents
  ("distinguish retriable from non-retriable Pod failure policies"): each Job's `podFailurePolicy`
  fails the Job (`FailJob`) on the pod condition `DisruptionTarget` (rule 0) or on the exit codes
  (`onExitCodes In`, the next rule); the Job controller then fails the Job with reason
  `PodFailurePolicy` and a message that ends `... matching FailJob rule at index N`
  (pkg/controller/job/pod_failure_policy.go: `Pod <ns>/<pod> has condition DisruptionTarget
  matching FailJob rule at index 0`, `Container <c> for pod <ns>/<pod> failed with exit code 2
  matching FailJob rule at index 1`). JobSet rules match that reason and message
  (failure_policy.go `ruleIsApplicable`: the reason is in `onJobFailureReasons` and one
  `onJobFailureMessagePatterns` regexp matches the message) and restart without counting
  (`RestartJobSetAndIgnoreMaxRestarts`) or fail the JobSet (`FailJobSet`). A Job failure that
  matches neither (`BackoffLimitExceeded`) gets JobSet's default, `RestartJobSet`, counted.
  `podFailurePolicy` needs `restartPolicy: Never` on the pod template (batch validation), which
  is set whenever a rule is.
- `--ttl` is the JobSet's `ttlSecondsAfterFinished`.
- `--checkpoint CLAIM[:PATH]` mounts one PersistentVolumeClaim in every trainer pod, with
  `KTRAIN_CHECKPOINT_DIR` and `KTRAIN_RESTART_ATTEMPT` (the pod's `jobset.sigs.k8s.io/restart-attempt`
  label, through the downward API). It travels as a runtime patch, so a TrainJob carries it too.

In a job file the same settings are annotations on the TrainJob (`ktrain.io/max-restarts: "3"`,
...: `ANNOTATIONS`); a flag wins over its annotation.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ktrain import constants as c
from ktrain.authoring.placement import trainer_job_names
from ktrain.engine.field_errors import dns1123_subdomain_errors
from ktrain.errors import UsageError
from ktrain.util.jsondata import deep_copy

if TYPE_CHECKING:
    from typing import Any

    from ktrain.util.jsondata import Obj

# The JobSet controller's label and annotation on every Job and pod of an attempt (jobset
# api/jobset/v1alpha2 `RestartsKey`): the attempt number, 0 first.
RESTART_ATTEMPT_LABEL = "jobset.sigs.k8s.io/restart-attempt"
CHECKPOINT_DIR_ENV = "KTRAIN_CHECKPOINT_DIR"
RESTART_ATTEMPT_ENV = "KTRAIN_RESTART_ATTEMPT"
CHECKPOINT_VOLUME = "ktrain-checkpoint"
DEFAULT_CHECKPOINT_PATH = "/checkpoints"
CHECKPOINT_PATCH_MANAGER = f"{c.DEFAULT_PATCH_MANAGER}-checkpoint"

# The JobSet rules ktrain writes (names: jobset_webhook.go ruleNameFmt), and the Job failure
# messages they match (the tails of the Job controller's messages, anchored at the rule index).
PREEMPTION_RULE = "RestartOnPreemption"
EXIT_CODE_RULE = "FailOnExitCode"
POD_FAILURE_POLICY_REASON = "PodFailurePolicy"  # batchv1.JobReasonPodFailurePolicy
DISRUPTION_TARGET = "DisruptionTarget"
MAX_EXIT_CODES = 255  # batch validation: maxPodFailurePolicyOnExitCodesValues
MAX_INT32 = 2**31 - 1

STRATEGIES = {"recreate": "Recreate", "blocking-recreate": "BlockingRecreate"}

# Job-file fields: annotations on the TrainJob, one per flag.
ANNOTATIONS = {
    "max_restarts": "ktrain.io/max-restarts",
    "restart_on_preemption": "ktrain.io/restart-on-preemption",
    "fail_on_exit_codes": "ktrain.io/fail-on-exit-code",
    "restart_strategy": "ktrain.io/restart-strategy",
    "ttl_seconds": "ktrain.io/ttl",
    "checkpoint": "ktrain.io/checkpoint",
}
FLAGS = {
    "max_restarts": "--max-restarts",
    "restart_on_preemption": "--restart-on-preemption",
    "fail_on_exit_codes": "--fail-on-exit-code",
    "restart_strategy": "--restart-strategy",
    "ttl_seconds": "--ttl",
    "checkpoint": "--checkpoint",
}


@dataclass
class Checkpoint:
    claim: str
    path: str = DEFAULT_CHECKPOINT_PATH


@dataclass
class FailurePolicy:
    """The effective settings of one job (flags over the job file's annotations)."""

    max_restarts: int | None = None
    restart_on_preemption: bool = False
    fail_on_exit_codes: list[int] = field(default_factory=list)
    restart_strategy: str | None = None
    ttl_seconds: int | None = None
    checkpoint: Checkpoint | None = None
    # Where each setting came from (a flag or an annotation), for messages.
    sources: dict[str, str] = field(default_factory=dict)

    def touches_jobset(self) -> bool:
        return any(
            [
                self.max_restarts is not None,
                self.restart_on_preemption,
                self.fail_on_exit_codes,
                self.restart_strategy is not None,
                self.ttl_seconds is not None,
            ]
        )

    def given(self) -> list[str]:
        """The flags or annotations set, in flag order."""
        return [self.sources[key] for key in FLAGS if key in self.sources]


# -- parsing --------------------------------------------------------------------------------------


def parse_max_restarts(value: object, what: str = "--max-restarts") -> int:
    text = str(value).strip()
    if isinstance(value, bool) or not text.isdigit() or int(text) > MAX_INT32:
        raise UsageError(f"{what}: expected a count 0..{MAX_INT32}, got {str(value)[:60]!r}")
    return int(text)


def parse_exit_codes(text: str, what: str = "--fail-on-exit-code") -> list[int]:
    """`2` or `2,42`: exit codes 1-255, sorted and unique (the Job API wants them ordered)."""
    codes: set[int] = set()
    for part in str(text).split(","):
        word = part.strip()
        if not word.isdigit() or not 1 <= int(word) <= 255:
            hint = "0 is success, which no failure rule can match" if word == "0" else "e.g. 2 or 2,42"
            raise UsageError(f"{what}: {word[:20]!r} is not an exit code 1-255", hint=hint)
        codes.add(int(word))
    return sorted(codes)


def parse_restart_strategy(text: str, what: str = "--restart-strategy") -> str:
    word = str(text).strip()
    if word in STRATEGIES.values():
        return word
    if word.lower() in STRATEGIES:
        return STRATEGIES[word.lower()]
    raise UsageError(
        f"{what} must be recreate or blocking-recreate, got {word[:40]!r}",
        hint="InPlaceRestart needs JobSet's agent sidecar in every pod; ktrain does not render it",
    )


_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_duration_seconds(text: str, what: str) -> int:
    """Whole seconds from `3600`, `90s`, `30m`, `12h`, `7d`, `1d12h` (no `re`: the render path)."""
    value = str(text).strip()
    if value.isdigit():
        total = int(value)
    else:
        total, number = 0, ""
        for ch in value:
            if ch.isdigit():
                number += ch
            elif ch in _SECONDS and number:
                total += int(number) * _SECONDS[ch]
                number = ""
            else:
                number = "x"
                break
        if number or not value:
            raise UsageError(f"{what} expects a duration such as 3600, 30m, 12h or 7d, got {value[:40]!r}")
    if total > MAX_INT32:
        raise UsageError(f"{what}: {value!r} is more than {MAX_INT32} seconds")
    return total


def parse_checkpoint(text: str, what: str = "--checkpoint") -> Checkpoint:
    """`CLAIM` or `CLAIM:PATH` (an absolute path in the pod; default /checkpoints)."""
    claim, sep, path = str(text).partition(":")
    problems = dns1123_subdomain_errors(claim) if claim else ["a PersistentVolumeClaim name is required"]
    if problems:
        raise UsageError(f"{what}: {claim[:80]!r} is not a claim name: " + "; ".join(problems), hint="CLAIM[:PATH]")
    if sep and (not path.startswith("/") or ":" in path or len(path) > 4096):
        raise UsageError(f"{what}: the path must be absolute, got {path[:80]!r}", hint="e.g. my-claim:/checkpoints")
    return Checkpoint(claim=claim, path=(path.rstrip("/") or "/") if sep else DEFAULT_CHECKPOINT_PATH)


def parse_bool(value: object, what: str) -> bool:
    if isinstance(value, bool):
        return value
    word = str(value).strip().lower()
    if word in ("true", "yes", "1"):
        return True
    if word in ("false", "no", "0"):
        return False
    raise UsageError(f"{what}: expected true or false, got {str(value)[:40]!r}")


# -- the effective policy -------------------------------------------------------------------------


FIELDS = tuple(FLAGS)  # the JobOverrides fields, with these names


def resolve(overrides: Any, job: Obj | None) -> FailurePolicy | None:
    """The settings of one job: the flags (`JobOverrides` fields of `FIELDS`' names), else the
    TrainJob's `ktrain.io/` annotations."""
    meta = (job or {}).get("metadata")
    annotations = (meta.get("annotations") if isinstance(meta, dict) else None) or {}
    if not isinstance(annotations, dict):
        annotations = {}
    policy = FailurePolicy()
    flag_values = {key: getattr(overrides, key, None) for key in FIELDS}
    parsers: dict[str, Any] = {
        "max_restarts": parse_max_restarts,
        "restart_on_preemption": parse_bool,
        "fail_on_exit_codes": parse_exit_codes,
        "restart_strategy": parse_restart_strategy,
        "ttl_seconds": parse_duration_seconds,
        "checkpoint": parse_checkpoint,
    }
    for key, flag_value in flag_values.items():
        if flag_value is not None:
            value, source = flag_value, FLAGS[key]
        elif ANNOTATIONS[key] in annotations:
            source = f"annotation {ANNOTATIONS[key]}"
            value = parsers[key](annotations[ANNOTATIONS[key]], source)
        else:
            continue
        if value in (False, []):
            continue
        setattr(policy, key, value)
        policy.sources[key] = source
    return policy if policy.sources else None


# -- the rendered JobSet --------------------------------------------------------------------------


def _pod_rules(policy: FailurePolicy) -> list[Obj]:
    rules: list[Obj] = []
    if policy.restart_on_preemption:
        rules.append({"action": "FailJob", "onPodConditions": [{"type": DISRUPTION_TARGET, "status": "True"}]})
    if policy.fail_on_exit_codes:
        rules.append(
            {"action": "FailJob", "onExitCodes": {"operator": "In", "values": list(policy.fail_on_exit_codes)}}
        )
    return rules


def _jobset_rules(policy: FailurePolicy) -> list[Obj]:
    rules: list[Obj] = []
    index = 0
    if policy.restart_on_preemption:
        rules.append(
            {
                "name": PREEMPTION_RULE,
                "action": "RestartJobSetAndIgnoreMaxRestarts",
                "onJobFailureReasons": [POD_FAILURE_POLICY_REASON],
                "onJobFailureMessagePatterns": [f"has condition {DISRUPTION_TARGET} matching FailJob rule at index 0$"],
            }
        )
        index = 1
    if policy.fail_on_exit_codes:
        rules.append(
            {
                "name": EXIT_CODE_RULE,
                "action": "FailJobSet",
                "onJobFailureReasons": [POD_FAILURE_POLICY_REASON],
                "onJobFailureMessagePatterns": [
                    f"failed with exit code [0-9]+ matching FailJob rule at index {index}$"
                ],
            }
        )
    return rules


def _job_templates(jobset: Obj) -> list[tuple[str, Obj]]:
    out: list[tuple[str, Obj]] = []
    for rjob in (jobset.get("spec") or {}).get("replicatedJobs") or []:
        if isinstance(rjob, dict):
            template = rjob.setdefault("template", {})
            out.append((str(rjob.get("name")), template.setdefault("spec", {})))
    return out


def apply(objects: list[Obj], policy: FailurePolicy, *, elastic: bool = False) -> None:
    """Write `policy` onto the rendered JobSet, in place (the checkpoint is a runtime patch:
    `checkpoint_patch`)."""
    if not policy.touches_jobset():
        return
    jobset = next((o for o in objects if o.get("kind") == c.JOBSET_KIND), None)
    if jobset is None:
        raise UsageError(" ".join(policy.given()) + ": nothing rendered a JobSet to carry it")
    spec = jobset.setdefault("spec", {})
    if policy.ttl_seconds is not None:
        spec["ttlSecondsAfterFinished"] = policy.ttl_seconds
    pod_rules = _pod_rules(policy)
    restarts = policy.max_restarts is not None or policy.restart_on_preemption
    if not (restarts or pod_rules or policy.restart_strategy is not None):
        return
    failure = spec.get("failurePolicy")
    if not isinstance(failure, dict):
        failure = spec["failurePolicy"] = {}
    if policy.max_restarts is not None:
        failure["maxRestarts"] = policy.max_restarts
    if policy.restart_strategy is not None:
        if not (failure.get("maxRestarts") or restarts or _restarting_rules(failure)):
            raise UsageError(
                f"{policy.sources['restart_strategy']}: this job never restarts (maxRestarts 0), so how it "
                "restarts does not matter",
                hint="add --max-restarts N or --restart-on-preemption",
            )
        failure["restartStrategy"] = policy.restart_strategy
    ours = _jobset_rules(policy)
    if ours:
        theirs = [r for r in failure.get("rules") or [] if isinstance(r, dict)]
        taken = {r.get("name") for r in theirs}
        for rule in ours:
            if rule["name"] in taken:
                raise UsageError(
                    f"the runtime's JobSet already has a failure policy rule named {rule['name']}",
                    hint="rule names must be unique (JobSet webhook); drop the flag or rename the runtime's rule",
                )
        # Ours first: the first matching rule wins, and a flag wins over the runtime.
        failure["rules"] = ours + theirs
    for rjob_name, job_spec in _job_templates(jobset):
        pod_spec = job_spec.setdefault("template", {}).setdefault("spec", {})
        if pod_rules:
            if job_spec.get("podFailurePolicy"):
                raise UsageError(
                    f"replicated job {rjob_name} of the runtime already has a podFailurePolicy; "
                    + " and ".join(
                        s for k, s in policy.sources.items() if k in ("restart_on_preemption", "fail_on_exit_codes")
                    )
                    + " would shift its rules' indexes, which JobSet rules match on",
                    hint="put the rules in the runtime instead (docs/failure-policy.md)",
                )
            job_spec["podFailurePolicy"] = {"rules": [dict(r) for r in pod_rules]}
        if policy.max_restarts is not None and not elastic:
            job_spec["backoffLimit"] = 0
        if pod_rules or (policy.max_restarts is not None and not elastic):
            pod_spec["restartPolicy"] = "Never"


def _restarting_rules(failure: Obj) -> bool:
    ignoring = ("RestartJobSetAndIgnoreMaxRestarts", "RestartJobAndIgnoreMaxRestarts")
    return any(isinstance(r, dict) and r.get("action") in ignoring for r in failure.get("rules") or [])


# -- the checkpoint: a runtime patch --------------------------------------------------------------


def checkpoint_jobs(runtime_template: Obj) -> list[str]:
    """The trainer's replicated jobs: the pods `spec.trainer.env` reaches (placement's rule)."""
    return trainer_job_names(runtime_template)


def checkpoint_env(checkpoint: Checkpoint) -> list[Obj]:
    return [
        {"name": CHECKPOINT_DIR_ENV, "value": checkpoint.path},
        {
            "name": RESTART_ATTEMPT_ENV,
            "valueFrom": {"fieldRef": {"fieldPath": f"metadata.labels['{RESTART_ATTEMPT_LABEL}']"}},
        },
    ]


def checkpoint_patch(runtime_template: Obj, checkpoint: Checkpoint, source: str = "--checkpoint") -> Obj:
    """The runtime patch (manager ktrain.io/cli-checkpoint) that mounts the claim in every trainer
    pod, with the two variables: the TrainJob API allows volumes, volumeMounts and env there."""
    jobs = checkpoint_jobs(runtime_template)
    if not jobs:
        raise UsageError(f"{source}: the runtime has no replicated job with a `node` container to mount it in")
    for rjob in (runtime_template.get("spec") or {}).get("replicatedJobs") or []:
        pod = ((((rjob or {}).get("template") or {}).get("spec") or {}).get("template") or {}).get("spec") or {}
        if (rjob or {}).get("name") not in jobs:
            continue
        for volume in pod.get("volumes") or []:
            if isinstance(volume, dict) and volume.get("name") == CHECKPOINT_VOLUME:
                raise UsageError(f"{source}: the runtime already has a volume named {CHECKPOINT_VOLUME}")
        for ct in pod.get("containers") or []:
            if isinstance(ct, dict) and ct.get("name") == c.NODE:
                for mount in ct.get("volumeMounts") or []:
                    if isinstance(mount, dict) and mount.get("mountPath") == checkpoint.path:
                        raise UsageError(
                            f"{source}: {checkpoint.path} is already a mount of the runtime's {rjob['name']} pods",
                            hint="pick another path: CLAIM:/checkpoints",
                        )
    volume = {"name": CHECKPOINT_VOLUME, "persistentVolumeClaim": {"claimName": checkpoint.claim}}
    mount = {"name": CHECKPOINT_VOLUME, "mountPath": checkpoint.path}
    pod = {"volumes": [volume], "containers": [{"name": c.NODE, "volumeMounts": [mount]}]}
    rjobs = [{"name": name, "template": {"spec": {"template": {"spec": deep_copy(pod)}}}} for name in jobs]
    return {
        "manager": CHECKPOINT_PATCH_MANAGER,
        "trainingRuntimeSpec": {"template": {"spec": {"replicatedJobs": rjobs}}},
    }


def add_checkpoint(data: Obj, runtime_template: Obj, checkpoint: Checkpoint, source: str = "--checkpoint") -> None:
    """The checkpoint on a TrainJob mapping, in place: its two variables in `spec.trainer.env`
    (Trainer's webhook refuses env for the `node` container in a runtime patch) and the volume and
    its mount in a runtime patch (which may carry them)."""
    spec = data.setdefault("spec", {})
    patches = spec.get("runtimePatches")
    if not isinstance(patches, list):
        patches = spec["runtimePatches"] = []
    patches[:] = [p for p in patches if not (isinstance(p, dict) and p.get("manager") == CHECKPOINT_PATCH_MANAGER)]
    patches.append(checkpoint_patch(runtime_template, checkpoint, source))
    trainer = spec.get("trainer")
    if not isinstance(trainer, dict):
        trainer = spec["trainer"] = {}
    env = trainer.get("env")
    if not isinstance(env, list):
        env = trainer["env"] = []
    for var in checkpoint_env(checkpoint):
        env[:] = [e for e in env if not (isinstance(e, dict) and e.get("name") == var["name"])]
        env.append(var)


# -- --target trainjob ----------------------------------------------------------------------------

# What a TrainJob cannot carry (its runtimePatches reach only a pod template's metadata, volumes,
# containers' env/volumeMounts/securityContext, placement and a few pod fields: no JobSet or Job
# field), and the upstream proposal that would carry it.
TRAINJOB_REFUSALS = {
    "max_restarts": "KEP-4162 (TrainJob failure policy: spec.failurePolicy.maxRestarts)",
    "restart_on_preemption": "KEP-4162 (failure policy rules on the runtime's runPolicy)",
    "fail_on_exit_codes": "KEP-4162 (failure policy rules on the runtime's runPolicy)",
    "restart_strategy": "KEP-4162 (it translates the policy to JobSet's restart, Recreate only)",
    "ttl_seconds": "KEP-2899 (ttlSecondsAfterFinished on the runtime's runPolicy)",
}


def refuse_for_trainjob(policy: FailurePolicy | None) -> None:
    """--target trainjob: only the checkpoint travels (a runtime patch); the rest is refused."""
    if policy is None:
        return
    for key, proposal in TRAINJOB_REFUSALS.items():
        if key in policy.sources:
            raise UsageError(
                f"{policy.sources[key]} cannot travel in a TrainJob: the Trainer API (v2.3) has no field for it "
                f"and runtimePatches reach no JobSet or Job field; upstream proposal: {proposal}",
                hint="use --target jobset, or set it in the runtime's JobSet template",
            )
