"""The failure policy's pure parts (`ktrain.authoring.failure_policy`): the flag and annotation
parsers, which setting wins (`resolve`), what it writes on a JobSet (`apply`), the checkpoint's
runtime patch, and what `--target trainjob` refuses. The end-to-end behaviour (restarts on the
double, the golden cases) lives in tests/failure/ and tests/golden/test_failure_policy_cases.py."""

from __future__ import annotations

import pytest

from ktrain.authoring import failure_policy as fp
from ktrain.authoring.failure_policy import (
    Checkpoint,
    FailurePolicy,
    parse_checkpoint,
    parse_duration_seconds,
    parse_exit_codes,
    parse_max_restarts,
    parse_restart_strategy,
    refuse_for_trainjob,
    resolve,
)
from ktrain.errors import ExitCode, UsageError
from ktrain.service.requests import JobOverrides


def jobset(*names: str, **spec: object) -> dict:
    rjobs = [
        {"name": n, "template": {"spec": {"template": {"spec": {"containers": [{"name": "node"}]}}}}} for n in names
    ]
    return {"kind": "JobSet", "spec": {"replicatedJobs": rjobs, **spec}}


def job_with(**annotations: str) -> dict:
    return {"kind": "TrainJob", "metadata": {"name": "j", "annotations": annotations}}


# -- parsing --------------------------------------------------------------------------------------


def test_exit_codes_are_sorted_unique_and_1_to_255() -> None:
    assert parse_exit_codes("42, 2,42") == [2, 42]
    assert parse_exit_codes("255") == [255]
    for bad in ("256", "-1", "two", "2,,3", ""):
        with pytest.raises(UsageError, match="is not an exit code 1-255") as err:
            parse_exit_codes(bad)
        assert err.value.exit_code == ExitCode.USAGE
    with pytest.raises(UsageError) as zero:
        parse_exit_codes("1,0", "annotation ktrain.io/fail-on-exit-code")
    assert str(zero.value).startswith("annotation ktrain.io/fail-on-exit-code: '0'")
    assert zero.value.hint == "0 is success, which no failure rule can match"


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("3600", 3600), ("90s", 90), ("30m", 1800), ("12h", 43200), ("7d", 604800), ("1d12h", 129600), (" 5m ", 300)],
)
def test_durations_in_seconds_or_with_units(text: str, seconds: int) -> None:
    assert parse_duration_seconds(text, "--ttl") == seconds


@pytest.mark.parametrize("text", ["", "h", "12x", "1.5h", "12h3", "-5", "m30"])
def test_a_duration_that_is_not_one_says_what_it_expects(text: str) -> None:
    with pytest.raises(UsageError, match=r"^--ttl expects a duration such as 3600, 30m, 12h or 7d"):
        parse_duration_seconds(text, "--ttl")


def test_a_duration_beyond_int32_is_refused() -> None:
    assert parse_duration_seconds(str(2**31 - 1), "--ttl") == 2**31 - 1
    with pytest.raises(UsageError, match="is more than 2147483647 seconds"):
        parse_duration_seconds("24856d", "--ttl")


def test_checkpoint_is_a_claim_and_an_optional_absolute_path() -> None:
    assert parse_checkpoint("ckpt") == Checkpoint(claim="ckpt", path="/checkpoints")
    assert parse_checkpoint("ckpt:/mnt/ckpt/") == Checkpoint(claim="ckpt", path="/mnt/ckpt")
    assert parse_checkpoint("ckpt:/") == Checkpoint(claim="ckpt", path="/")
    with pytest.raises(UsageError, match="a PersistentVolumeClaim name is required"):
        parse_checkpoint(":/mnt")
    with pytest.raises(UsageError, match=r"^--checkpoint: 'My_Claim' is not a claim name: "):
        parse_checkpoint("My_Claim")
    for path in ("relative/dir", "/a:b", "/" + "x" * 4096):
        with pytest.raises(UsageError, match="the path must be absolute"):
            parse_checkpoint(f"ckpt:{path}")


def test_max_restarts_and_restart_strategy_spellings() -> None:
    assert parse_max_restarts("3") == 3 and parse_max_restarts(0) == 0
    for bad in (True, "-1", "3.0", "lots", 2**31):
        with pytest.raises(UsageError, match=r"--max-restarts: expected a count 0\.\.2147483647"):
            parse_max_restarts(bad)
    assert parse_restart_strategy("blocking-recreate") == "BlockingRecreate"
    assert parse_restart_strategy("Recreate") == "Recreate"
    with pytest.raises(UsageError, match="must be recreate or blocking-recreate, got 'InPlaceRestart'") as err:
        parse_restart_strategy("InPlaceRestart")
    assert "agent sidecar" in (err.value.hint or "")


# -- resolve --------------------------------------------------------------------------------------


def test_nothing_set_is_no_policy() -> None:
    assert resolve(JobOverrides(), None) is None
    assert resolve(JobOverrides(), {"metadata": {"annotations": None}}) is None
    assert resolve(JobOverrides(restart_on_preemption=False, fail_on_exit_codes=[]), job_with()) is None


def test_annotations_are_parsed_and_a_flag_wins_over_its_annotation() -> None:
    job = job_with(**{"ktrain.io/max-restarts": "3", "ktrain.io/ttl": "1h", "ktrain.io/restart-on-preemption": "yes"})
    policy = resolve(JobOverrides(max_restarts=5), job)
    assert policy is not None
    assert (policy.max_restarts, policy.ttl_seconds, policy.restart_on_preemption) == (5, 3600, True)
    assert policy.given() == [
        "--max-restarts",
        "annotation ktrain.io/restart-on-preemption",
        "annotation ktrain.io/ttl",
    ]


def test_a_bad_annotation_is_named_in_the_error() -> None:
    with pytest.raises(UsageError, match=r"^annotation ktrain\.io/checkpoint: 'Bad_Claim' is not a claim name"):
        resolve(JobOverrides(), job_with(**{"ktrain.io/checkpoint": "Bad_Claim"}))
    with pytest.raises(UsageError, match=r"^annotation ktrain\.io/restart-on-preemption: expected true or false"):
        resolve(JobOverrides(), job_with(**{"ktrain.io/restart-on-preemption": "maybe"}))


def test_a_checkpoint_alone_does_not_touch_the_jobset() -> None:
    policy = resolve(JobOverrides(checkpoint=Checkpoint(claim="c")), None)
    assert policy is not None and not policy.touches_jobset()
    objects = [jobset("node")]
    before = repr(objects)
    fp.apply(objects, policy)
    assert repr(objects) == before


# -- apply ----------------------------------------------------------------------------------------


def test_max_restarts_makes_every_job_fail_at_once_unless_elastic() -> None:
    objects = [jobset("launcher", "node")]
    fp.apply(objects, FailurePolicy(max_restarts=2, sources={"max_restarts": "--max-restarts"}))
    spec = objects[0]["spec"]
    assert spec["failurePolicy"] == {"maxRestarts": 2}
    for rjob in spec["replicatedJobs"]:
        assert rjob["template"]["spec"]["backoffLimit"] == 0
        assert rjob["template"]["spec"]["template"]["spec"]["restartPolicy"] == "Never"
    elastic = [jobset("node")]
    fp.apply(elastic, FailurePolicy(max_restarts=2, sources={"max_restarts": "--max-restarts"}), elastic=True)
    assert "backoffLimit" not in elastic[0]["spec"]["replicatedJobs"][0]["template"]["spec"]


def test_preemption_and_exit_code_rules_point_at_their_pod_rule_indexes() -> None:
    policy = FailurePolicy(
        restart_on_preemption=True,
        fail_on_exit_codes=[2, 42],
        sources={"restart_on_preemption": "--restart-on-preemption", "fail_on_exit_codes": "--fail-on-exit-code"},
    )
    objects = [jobset("node", failurePolicy={"rules": [{"name": "Theirs", "action": "FailJobSet"}]})]
    fp.apply(objects, policy)
    failure = objects[0]["spec"]["failurePolicy"]
    assert [r["name"] for r in failure["rules"]] == ["RestartOnPreemption", "FailOnExitCode", "Theirs"]
    assert failure["rules"][0]["action"] == "RestartJobSetAndIgnoreMaxRestarts"
    assert failure["rules"][1]["onJobFailureMessagePatterns"] == [
        "failed with exit code [0-9]+ matching FailJob rule at index 1$"
    ]
    job_spec = objects[0]["spec"]["replicatedJobs"][0]["template"]["spec"]
    assert job_spec["podFailurePolicy"]["rules"][1]["onExitCodes"] == {"operator": "In", "values": [2, 42]}
    assert job_spec["template"]["spec"]["restartPolicy"] == "Never"
    # exit codes alone: their pod rule is the first
    alone = [jobset("node")]
    fp.apply(alone, FailurePolicy(fail_on_exit_codes=[3], sources={"fail_on_exit_codes": "--fail-on-exit-code"}))
    pattern = alone[0]["spec"]["failurePolicy"]["rules"][0]["onJobFailureMessagePatterns"][0]
    assert pattern.endswith("at index 0$")


def test_apply_refuses_what_would_clash_with_the_runtime() -> None:
    exit_codes = FailurePolicy(fail_on_exit_codes=[2], sources={"fail_on_exit_codes": "--fail-on-exit-code"})
    with pytest.raises(UsageError, match="already has a failure policy rule named FailOnExitCode"):
        fp.apply([jobset("node", failurePolicy={"rules": [{"name": "FailOnExitCode"}]})], exit_codes)
    theirs = jobset("node")
    theirs["spec"]["replicatedJobs"][0]["template"]["spec"]["podFailurePolicy"] = {"rules": [{"action": "Ignore"}]}
    with pytest.raises(UsageError, match="replicated job node of the runtime already has a podFailurePolicy"):
        fp.apply([theirs], exit_codes)
    strategy = FailurePolicy(restart_strategy="Recreate", sources={"restart_strategy": "--restart-strategy"})
    with pytest.raises(UsageError, match="this job never restarts") as err:
        fp.apply([jobset("node")], strategy)
    assert err.value.hint == "add --max-restarts N or --restart-on-preemption"
    ttl = FailurePolicy(ttl_seconds=60, sources={"ttl_seconds": "--ttl"})
    with pytest.raises(UsageError, match=r"^--ttl: nothing rendered a JobSet to carry it$"):
        fp.apply([{"kind": "TrainJob"}], ttl)


def test_a_restart_strategy_with_the_runtimes_own_budget_and_a_ttl() -> None:
    objects = [jobset("node", failurePolicy={"maxRestarts": 4})]
    policy = FailurePolicy(
        restart_strategy="BlockingRecreate",
        ttl_seconds=600,
        sources={"restart_strategy": "--restart-strategy", "ttl_seconds": "--ttl"},
    )
    fp.apply(objects, policy)
    assert objects[0]["spec"]["failurePolicy"] == {"maxRestarts": 4, "restartStrategy": "BlockingRecreate"}
    assert objects[0]["spec"]["ttlSecondsAfterFinished"] == 600


# -- the checkpoint -------------------------------------------------------------------------------


def runtime_template(*names: str) -> dict:
    return jobset(*names)


def test_the_checkpoint_travels_in_the_trainjob_as_env_and_a_runtime_patch() -> None:
    data = {"spec": {"trainer": {"env": [{"name": "KTRAIN_CHECKPOINT_DIR", "value": "/old"}, {"name": "A"}]}}}
    fp.add_checkpoint(data, runtime_template("node"), Checkpoint(claim="ckpt", path="/ckpt"))
    fp.add_checkpoint(data, runtime_template("node"), Checkpoint(claim="ckpt", path="/ckpt"))  # twice: no duplicates
    env = data["spec"]["trainer"]["env"]
    assert [e["name"] for e in env] == ["A", "KTRAIN_CHECKPOINT_DIR", "KTRAIN_RESTART_ATTEMPT"]
    assert env[1]["value"] == "/ckpt"
    assert env[2]["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.labels['jobset.sigs.k8s.io/restart-attempt']"
    (patch,) = data["spec"]["runtimePatches"]
    assert patch["manager"] == fp.CHECKPOINT_PATCH_MANAGER
    (rjob,) = patch["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"]
    pod = rjob["template"]["spec"]["template"]["spec"]
    assert rjob["name"] == "node"
    assert pod["volumes"] == [{"name": "ktrain-checkpoint", "persistentVolumeClaim": {"claimName": "ckpt"}}]
    assert pod["containers"] == [
        {"name": "node", "volumeMounts": [{"name": "ktrain-checkpoint", "mountPath": "/ckpt"}]}
    ]


def test_the_checkpoint_refuses_a_runtime_it_would_clash_with() -> None:
    with pytest.raises(UsageError, match="no replicated job with a `node` container"):
        fp.checkpoint_patch({"spec": {"replicatedJobs": []}}, Checkpoint(claim="c"))
    taken = runtime_template("node")
    pod = taken["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    pod["containers"][0]["volumeMounts"] = [{"name": "data", "mountPath": "/checkpoints"}]
    with pytest.raises(UsageError, match="/checkpoints is already a mount of the runtime's node pods"):
        fp.checkpoint_patch(taken, Checkpoint(claim="c"))
    pod["volumes"] = [{"name": "ktrain-checkpoint"}]
    with pytest.raises(UsageError, match="already has a volume named ktrain-checkpoint"):
        fp.checkpoint_patch(taken, Checkpoint(claim="c", path="/elsewhere"))


# -- --target trainjob ----------------------------------------------------------------------------


def test_a_trainjob_carries_only_the_checkpoint() -> None:
    refuse_for_trainjob(None)
    refuse_for_trainjob(FailurePolicy(checkpoint=Checkpoint(claim="c"), sources={"checkpoint": "--checkpoint"}))
    for key, source in fp.FLAGS.items():
        if key == "checkpoint":
            continue
        policy = FailurePolicy(sources={key: source})
        with pytest.raises(UsageError, match=f"^{source} cannot travel in a TrainJob") as err:
            refuse_for_trainjob(policy)
        assert fp.TRAINJOB_REFUSALS[key] in str(err.value)
        assert err.value.hint == "use --target jobset, or set it in the runtime's JobSet template"
