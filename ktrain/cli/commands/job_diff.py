"""`ktrain job diff NAME`: the job's live objects beside what a render would make now.

Exit status as `kubectl diff`'s: 0 no difference, 1 differences, above 1 an error (ktrain's
error exit codes below 2 are raised to 2 here, so that 1 always means "they differ").
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from ktrain.cli.common import report_inputs, warn
from ktrain.cli.jobinput import JobInput
from ktrain.cli.spec import REQUEST_TIMEOUT, Argument, command
from ktrain.errors import ExitCode, KtrainError, UsageError

if TYPE_CHECKING:
    from typing import Annotated, Any

JOB = Argument(help="The job (TrainJob or JobSet) name.", metavar="NAME")
DIFF_ERROR = ExitCode.USAGE  # 2: `kubectl diff`'s exit status for any error
EXTERNAL_DIFF = "KUBECTL_EXTERNAL_DIFF"


@command("job", "diff")
def diff_job(
    job_input: JobInput,
    job_name: Annotated[str, JOB],  # (JobInput has `name`: --name)
    request_timeout: Annotated[float, REQUEST_TIMEOUT] = 30.0,
) -> None:
    """Compare a job's live objects with what a render would make now: exit 0 the same, 1 they differ.

    Without -f or --runtime the live TrainJob is rendered again, with the cluster's runtimes and
    any flags given on top: a runtime changed since the job was submitted, or an object edited by
    hand, shows as a difference. A job submitted as a JobSet needs its source (-f FILE or the flags
    it was created with). Each rendered object is normalised by a server-side dry run, so what the
    server adds is no difference; Secret values are masked. KUBECTL_EXTERNAL_DIFF names another
    diff program, as for kubectl diff. An error exits above 1.
    """
    try:
        _diff(job_input, job_name, request_timeout)
    except KtrainError as exc:
        if int(exc.exit_code) < 2:
            exc.exit_code = DIFF_ERROR
        raise


def _live_source(trainjob: dict[str, Any]) -> dict[str, Any]:
    """The live TrainJob as a job file would say it: what the user gave, not what the server keeps."""
    from ktrain.jobs.diff import stripped

    out = stripped(trainjob)
    meta = out.get("metadata") or {}
    out["metadata"] = {k: v for k, v in meta.items() if k in ("name", "namespace", "labels", "annotations")}
    return out


def _diff(job_input: JobInput, name: str, request_timeout: float) -> None:
    from ktrain.jobs.plan import record_runtime, trainjob_to_submit
    from ktrain.service.connection import connect
    from ktrain.service.job_diff import compare, keep_live_ssh_keys
    from ktrain.service.job_get import find_job
    from ktrain.service.render import render_resolving

    if job_input.name is not None and job_input.name != name:
        raise UsageError(f"--name {job_input.name} and the job named {name}: give the name once")
    cluster = connect(job_input.connection(request_timeout))
    namespace = job_input.namespace or cluster.namespace
    trainjob, jobset = find_job(cluster, name, namespace)
    request = job_input.render_request()
    if not (job_input.filename or job_input.runtime):
        if trainjob is None:
            raise UsageError(
                f"job {name} was submitted as a JobSet: ktrain cannot render it again without its source",
                hint=f"give the file or flags it was created with: ktrain job diff {name} -f job.yaml",
            )
        from ktrain.inputs.documents import Document

        request.file = f"TrainJob {namespace}/{name} (live)"
        request.document = Document(data=_live_source(trainjob), file=request.file)
    request.overrides.name = name
    request.overrides.namespace = namespace
    request.default_namespace = namespace
    from ktrain.service.trainer_ca import fill_status_ca  # TrainJobStatus: the controller's CA

    ca_warning = fill_status_ca(cluster, request)
    outcome, notes = render_resolving(
        request, job_input.registry(), job_input.connection(request_timeout), cluster=cluster
    )
    report_inputs(request.notes, [*notes, *([ca_warning] if ca_warning else []), *outcome.result.warnings])
    objects = outcome.result.objects
    if trainjob is not None:  # submitted with --target trainjob: the TrainJob, and what its controller made
        ov = request.overrides
        desired = [trainjob_to_submit(outcome.job.to_dict(), objects, ov.labels, ov.annotations), *objects]
    else:
        desired = record_runtime(objects, outcome.runtime.runtime.name)
    keep_live_ssh_keys(cluster, desired, namespace)
    comparison = compare(cluster, name, namespace, desired, trainjob=trainjob, jobset=jobset)
    for message in comparison.warnings:
        warn(message)
    external = os.environ.get(EXTERNAL_DIFF)
    if external:
        from ktrain.cli.guard import ExitStatus

        raise ExitStatus(_run_external(external, comparison.pairs))
    from ktrain.output.diffs import unified

    text = "".join(unified(p.file_name, p.live, p.merged) for p in comparison.pairs)
    sys.stdout.write(text)
    if comparison.changed:
        from ktrain.cli.guard import ExitStatus

        raise ExitStatus(1)


def _external_command(text: str) -> list[str]:
    """KUBECTL_EXTERNAL_DIFF as kubectl reads it: split at spaces; the first word is the program,
    the others are kept only when made of letters, digits, `-` and `=` (kubectl's rule), and
    follow the two directories."""
    program, *args = text.split(" ")
    kept = []
    for arg in args:
        if arg and arg.isascii() and all(ch.isalnum() or ch in "-=" for ch in arg):
            kept.append(arg)
        else:
            warn(
                f"invalid argument is ignored: {arg}, only Alphanumeric (case-insensitive), dash and equal are allowed"
            )
    return [program, *kept]


def _run_external(text: str, pairs: list[Any]) -> int:
    """Write the LIVE and MERGED directories (one file per object, an empty one where it is
    absent, as kubectl writes them), run the program on them; its exit status 0 or 1 is the
    answer, anything else an error."""
    import shutil
    import subprocess
    import tempfile

    from ktrain.output.diffs import object_text

    program, *args = _external_command(text)
    live_dir = tempfile.mkdtemp(prefix="LIVE-")
    merged_dir = tempfile.mkdtemp(prefix="MERGED-")
    try:
        for pair in pairs:
            for directory, obj in ((live_dir, pair.live), (merged_dir, pair.merged)):
                path = os.path.join(directory, pair.file_name)
                with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w", encoding="utf-8") as f:
                    f.write(object_text(obj))
        sys.stdout.flush()
        try:
            done = subprocess.run([program, live_dir, merged_dir, *args], capture_output=True, check=False)
        except OSError as exc:
            raise KtrainError(f"failed to run {program!r}: {exc.strerror or exc}") from None
        sys.stdout.write(done.stdout.decode("utf-8", "replace"))
        sys.stderr.write(done.stderr.decode("utf-8", "replace"))
        if done.returncode not in (0, 1):
            raise KtrainError(f"failed to run {program!r}: exit status {done.returncode}")
        return done.returncode
    finally:
        shutil.rmtree(live_dir, ignore_errors=True)
        shutil.rmtree(merged_dir, ignore_errors=True)
