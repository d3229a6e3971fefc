"""JobSet admission as a cluster with JobSet v0.12 installed applies it to every write.

- Defaulting (the JobSet mutating webhook, `Default` in kubernetes-sigs/jobset
  pkg/webhooks/jobset_webhook.go): registered with `verbs=create` only, so defaults are added
  when a JobSet is created and never again. Among them `retentionPolicy` of each
  `volumeClaimPolicies` entry (`whenDeleted: Delete`).
- CEL transition rules of the CRD: `self == oldSelf` ("Value is immutable") on spec.successPolicy,
  failurePolicy, network, startupPolicy, volumeClaimPolicies and replicatedJobs[].dependsOn. The
  double keeps them as its own table (`IMMUTABLE_SPEC_FIELDS`), so they hold with or without
  ../shared; tests/test_apiserver_jobset_rules.py checks the table against the CRD when ../shared is
  there. As in apiextensions-apiserver, a transition rule is evaluated only where the field exists
  in both the old and the new object (and list items only where they correlate: by key in a
  `x-kubernetes-list-type: map` list). A re-apply that drops a server-defaulted field inside such a
  value therefore fails with `Value is immutable`.
- The validating webhook's `ValidateUpdate`: spec.replicatedJobs and spec.managedBy are immutable,
  except the pod template's labels, annotations, nodeSelector, tolerations and schedulingGates
  while the JobSet is (or is being) suspended.
"""

from __future__ import annotations

import copy
import itertools
import re
from typing import Any

from .errors import ApiError, FieldError, aggregate, invalid

JSON = dict[str, Any]

CEL_IMMUTABLE = "Value is immutable"
FIELD_IMMUTABLE = "field is immutable"


def default_on_create(obj: JSON) -> None:
    """The JobSet webhook's `Default` (create only)."""
    spec = obj.setdefault("spec", {})
    if not isinstance(spec, dict):
        return
    spec.setdefault("successPolicy", {"operator": "All"})
    spec.setdefault("startupPolicy", {"startupPolicyOrder": "AnyOrder"})
    for rjob in spec.get("replicatedJobs") or []:
        job_spec = ((rjob.get("template") or {}).setdefault("spec", {})) if isinstance(rjob, dict) else None
        if not isinstance(job_spec, dict):
            continue
        job_spec.setdefault("completionMode", "Indexed")
        pod_spec = job_spec.setdefault("template", {}).setdefault("spec", {})
        if isinstance(pod_spec, dict) and not pod_spec.get("restartPolicy"):
            pod_spec["restartPolicy"] = "OnFailure"
    network = spec.setdefault("network", {})
    if isinstance(network, dict):
        network.setdefault("enableDNSHostnames", True)
        network.setdefault("publishNotReadyAddresses", True)
    for i, rule in enumerate((spec.get("failurePolicy") or {}).get("rules") or []):
        if isinstance(rule, dict) and not rule.get("name"):
            rule["name"] = f"failurePolicyRule{i}"
    for policy in spec.get("volumeClaimPolicies") or []:
        if isinstance(policy, dict) and policy.get("retentionPolicy") is None:
            policy["retentionPolicy"] = {"whenDeleted": "Delete"}


# The CRD's `self == oldSelf` rules, as paths under spec. Source: kubernetes-sigs/jobset v0.12.0,
# config/components/crd/bases/jobset.x-k8s.io_jobsets.yaml (`x-kubernetes-validations`), generated from
# the `+kubebuilder:validation:XValidation:rule="self == oldSelf",message="Value is immutable"` markers
# on JobSetSpec.Network, SuccessPolicy, FailurePolicy, StartupPolicy, VolumeClaimPolicies and
# ReplicatedJob.DependsOn in api/jobset/v1alpha2/jobset_types.go. A `[name]` step goes into the items
# of a list-map keyed by `name` (replicatedJobs: `+listType=map`, `+listMapKey=name`): the rule then
# applies to each new item that has an old item of the same name.
IMMUTABLE_SPEC_FIELDS: tuple[tuple[str, ...], ...] = (
    ("network",),
    ("successPolicy",),
    ("failurePolicy",),
    ("startupPolicy",),
    ("volumeClaimPolicies",),  # an atomic list: compared whole
    ("replicatedJobs", "[name]", "dependsOn"),
)


def _immutable(steps: tuple[str, ...], old: Any, new: Any, path: str, errors: list[FieldError]) -> None:
    """Check `self == oldSelf` at the end of `steps`, going only where old and new both have a value.

    Every such field is an object or an array, whose value a failed rule does not print
    (apiextensions-apiserver schema/cel/validation.go: `field.OmitValueType{}` for those types):
    `spec.network: Invalid value: Value is immutable`."""
    if not steps:
        if old != new:
            errors.append(FieldError("FieldValueInvalid", path, f"Invalid value: {CEL_IMMUTABLE}"))
        return
    step, rest = steps[0], steps[1:]
    if step.startswith("["):
        if not (isinstance(old, list) and isinstance(new, list)):
            return
        key = step[1:-1]
        previous = {item[key]: item for item in old if isinstance(item, dict) and isinstance(item.get(key), str)}
        for i, item in enumerate(new):
            match = previous.get(item.get(key)) if isinstance(item, dict) and isinstance(item.get(key), str) else None
            if match is not None:
                _immutable(rest, match, item, f"{path}[{i}]", errors)
    elif isinstance(old, dict) and isinstance(new, dict) and step in old and step in new:
        _immutable(rest, old[step], new[step], f"{path}.{step}", errors)


def _pod_template_munged(new_spec: JSON, old_spec: JSON) -> list[Any]:
    """spec.replicatedJobs with the fields a suspended JobSet may change taken from the old one."""
    munged = copy.deepcopy(new_spec.get("replicatedJobs") or [])
    old_jobs = old_spec.get("replicatedJobs") or []
    for index, rjob in enumerate(munged):
        if index >= len(old_jobs):
            break
        new_pod = ((rjob.get("template") or {}).get("spec") or {}).get("template")
        old_pod = ((old_jobs[index].get("template") or {}).get("spec") or {}).get("template") or {}
        if not isinstance(new_pod, dict):
            continue
        new_meta = new_pod.setdefault("metadata", {})
        old_meta = old_pod.get("metadata") or {}
        for key in ("annotations", "labels"):
            _copy_key(old_meta, new_meta, key)
        new_pod_spec = new_pod.setdefault("spec", {})
        for key in ("nodeSelector", "tolerations", "schedulingGates"):
            _copy_key(old_pod.get("spec") or {}, new_pod_spec, key)
        if not new_meta:
            new_pod.pop("metadata", None)
    return munged


def _copy_key(source: JSON, target: JSON, key: str) -> None:
    if key in source:
        target[key] = copy.deepcopy(source[key])
    else:
        target.pop(key, None)


def transition_errors(old: JSON, new: JSON) -> list[FieldError]:
    """The CRD's `self == oldSelf` rules on an update (a 422 `Invalid` from the server)."""
    errors: list[FieldError] = []
    if isinstance(old.get("spec"), dict) and isinstance(new.get("spec"), dict):
        for steps in IMMUTABLE_SPEC_FIELDS:
            _immutable(steps, old["spec"], new["spec"], "spec", errors)
    return errors


def webhook_update_errors(old: JSON, new: JSON) -> list[FieldError]:
    """The validating webhook's `ValidateUpdate` (it denies the request: a 403)."""
    errors: list[FieldError] = []
    old_spec, new_spec = old.get("spec") or {}, copy.deepcopy(new.get("spec") or {})
    # replicatedJobs is a list-map: a real server's apply merges its items field by field and keeps
    # the create-time defaults inside them; the double's apply replaces lists whole, so put them back.
    defaulted = {"replicatedJobs": new_spec.get("replicatedJobs") or []}
    default_on_create({"spec": defaulted})
    new_spec["replicatedJobs"] = defaulted["replicatedJobs"]
    replicated = new_spec["replicatedJobs"]
    if old_spec.get("suspend") or new_spec.get("suspend"):
        replicated = _pod_template_munged(new_spec, old_spec)
    if replicated != (old_spec.get("replicatedJobs") or []):
        errors.append(invalid("spec.replicatedJobs", replicated, FIELD_IMMUTABLE))
    if new_spec.get("managedBy") != old_spec.get("managedBy"):
        errors.append(invalid("spec.managedBy", new_spec.get("managedBy"), FIELD_IMMUTABLE))
    return errors


def webhook_denied(errors: list[FieldError]) -> ApiError:
    """How the API server reports a validating webhook's refusal (controller-runtime: 403)."""
    return ApiError(403, f'admission webhook "vjobset.kb.io" denied the request: {aggregate(errors)}', "Forbidden")


# --- ValidateCreate -------------------------------------------------------------------------------
# kubernetes-sigs/jobset v0.12.0 pkg/webhooks/jobset_webhook.go `ValidateCreate` and
# `validateFailurePolicy`: the checks a JobSet ktrain renders can meet (names, the network subdomain,
# managedBy and the coordinator are the engine's: ktrain.engine.plugins.jobset.jobset_name_errors).
# Its errors are plain Go errors joined by errors.Join (one per line), not field errors.

# validOnJobFailureReasons: batchv1.JobReason* (k8s.io/api batch/v1 types.go)
VALID_ON_JOB_FAILURE_REASONS = (
    "BackoffLimitExceeded",
    "DeadlineExceeded",
    "FailedIndexes",
    "MaxFailedIndexesExceeded",
    "PodFailurePolicy",
)
_RULE_NAME = re.compile(r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$")  # ruleNameFmt


def webhook_create_errors(obj: JSON) -> list[str]:
    """The validating webhook's messages for a JobSet being created (after the defaults)."""
    spec = obj.get("spec") or {}
    errors: list[str] = []
    rjobs = [r for r in spec.get("replicatedJobs") or [] if isinstance(r, dict)]
    if rjobs and rjobs[0].get("dependsOn") is not None:
        errors.append("DependsOn can't be set for the first ReplicatedJob")
    names = [r.get("name") for r in rjobs]
    seen: set[Any] = set()
    for rjob in rjobs:
        seen.add(rjob.get("name"))
        depends = rjob.get("dependsOn")
        if depends and depends[0].get("name") not in seen:
            errors.append(f"replicatedJob: {rjob.get('name')} cannot depend on replicatedJob: {depends[0].get('name')}")
    for target in (spec.get("successPolicy") or {}).get("targetReplicatedJobs") or []:
        if target not in names:
            errors.append(f"invalid replicatedJob name '{target}' does not appear in .spec.ReplicatedJobs")
    failure = spec.get("failurePolicy")
    if isinstance(failure, dict):
        errors += failure_policy_errors(failure, names)
    return errors


def failure_policy_errors(failure: JSON, names: list[Any]) -> list[str]:
    """`validateFailurePolicy`: rule names (1-128 characters, ruleNameFmt, unique), the replicated
    jobs they target, and the Job failure reasons they match."""
    errors: list[str] = []
    by_name: dict[str, list[int]] = {}
    for index, rule in enumerate(failure.get("rules") or []):
        name = str(rule.get("name") or "")
        if not 1 <= len(name) <= 128:
            errors.append(
                f"invalid failure policy rule name of length {len(name)}, the rule name must be at least 1 "
                "characters long and at most 128 characters long"
            )
        by_name.setdefault(name, []).append(index)
        if not _RULE_NAME.match(name):
            errors.append(
                f"invalid failure policy rule name '{name}', a failure policy rule name must start with an "
                "alphabetic character, optionally followed by a string of alphanumeric characters or '_,:', and "
                "must end with an alphanumeric character or '_'"
            )
        for target in rule.get("targetReplicatedJobs") or []:
            if target not in names:
                errors.append(
                    f"invalid replicatedJob name '{target}' in failure policy does not appear in .spec.ReplicatedJobs"
                )
        for reason in rule.get("onJobFailureReasons") or []:
            if reason not in VALID_ON_JOB_FAILURE_REASONS:
                errors.append(
                    f"invalid job failure reason '{reason}' in failure policy is not a recognized job failure reason"
                )
    for name, indices in by_name.items():
        if len(indices) > 1:
            listed = "[" + " ".join(map(str, indices)) + "]"  # Go's %v of a []int
            errors.append(f"rule names are not unique, rules with indices {listed} all have the same name '{name}'")
    return errors


def webhook_create_denied(errors: list[str]) -> ApiError:
    return ApiError(403, 'admission webhook "vjobset.kb.io" denied the request: ' + "\n".join(errors), "Forbidden")


# --- the Jobs JobSet creates ----------------------------------------------------------------------
# What kube-apiserver refuses of a Job (kubernetes pkg/apis/batch/validation/validation.go:
# validatePodFailurePolicy, validatePodFailurePolicyRule, validatePodFailurePolicyRuleOnExitCodes,
# and ValidateJobSpec's restartPolicy rule). The JobSet webhook does not check a replicated job's
# template: a Job the API server refuses surfaces only when the JobSet controller creates it
# (a JobSet event), so the double's controller checks each Job with these before "creating" it.

_POD_FAILURE_ACTIONS = ("Count", "FailIndex", "FailJob", "Ignore")


def job_spec_errors(job_spec: JSON) -> list[FieldError]:
    errors: list[FieldError] = []
    pod = (job_spec.get("template") or {}).get("spec") or {}
    restart = pod.get("restartPolicy") or "OnFailure"  # as JobSet defaults it
    policy = job_spec.get("podFailurePolicy")
    if restart not in ("OnFailure", "Never"):
        errors.append(
            FieldError(
                "spec.template.spec.restartPolicy",
                f'Unsupported value: "{restart}": supported values: "OnFailure", "Never"',
            )
        )
    if not isinstance(policy, dict):
        return errors
    if restart != "Never":
        errors.append(
            invalid(
                "spec.template.spec.restartPolicy",
                restart,
                'only "Never" is supported when podFailurePolicy is specified',
            )
        )
    containers = {c.get("name") for c in [*(pod.get("containers") or []), *(pod.get("initContainers") or [])]}
    rules = policy.get("rules") or []
    if len(rules) > 20:
        errors.append(FieldError("spec.podFailurePolicy.rules", f"Too many: {len(rules)}: must have at most 20 items"))
    for i, rule in enumerate(rules):
        base = f"spec.podFailurePolicy.rules[{i}]"
        action = rule.get("action")
        if action not in _POD_FAILURE_ACTIONS:
            errors.append(FieldError(f"{base}.action", f'Unsupported value: "{action}"'))
        on_codes, on_conditions = rule.get("onExitCodes"), rule.get("onPodConditions")
        if on_codes is not None and on_conditions:
            errors.append(invalid(base, "", "specifying both OnExitCodes and OnPodConditions is not supported"))
        elif on_codes is None and not on_conditions:
            errors.append(invalid(base, "", "specifying one of OnExitCodes and OnPodConditions is required"))
        for j, pattern in enumerate(on_conditions or []):
            status = pattern.get("status", "True")
            if status not in ("True", "False", "Unknown"):
                errors.append(FieldError(f"{base}.onPodConditions[{j}].status", f'Unsupported value: "{status}"'))
        if on_codes is None:
            continue
        path = f"{base}.onExitCodes"
        operator = on_codes.get("operator")
        if operator not in ("In", "NotIn"):
            errors.append(FieldError(f"{path}.operator", f'Unsupported value: "{operator}"'))
        name = on_codes.get("containerName")
        if name is not None and name not in containers:
            errors.append(
                invalid(
                    f"{path}.containerName",
                    name,
                    "must be one of the container or initContainer names in the pod template",
                )
            )
        values = on_codes.get("values") or []
        if not values:
            errors.append(invalid(f"{path}.values", values, "at least one value is required"))
        elif len(values) > 255:
            errors.append(FieldError(f"{path}.values", f"Too many: {len(values)}: must have at most 255 items"))
        for j, value in enumerate(values):
            if operator == "In" and value == 0:
                errors.append(invalid(f"{path}.values[{j}]", value, "must not be 0 for the In operator"))
            if value in values[:j]:
                errors.append(FieldError(f"{path}.values[{j}]", f"Duplicate value: {value}"))
        if any(a > b for a, b in itertools.pairwise(values)):
            errors.append(invalid(f"{path}.values", values, "must be ordered"))
    return errors
