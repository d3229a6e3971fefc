"""`job why` (and `job get`'s `Why:`, `job wait`'s stall notices, `ktrain.Client().why`): the verdict
on a job, reading one more thing at a time until `ktrain.jobs.why.diagnosis.diagnose` decides.

The verdict is pure (`ktrain.jobs.why`); its reads are `ktrain.cluster.why_reads`. It asks for one
read at a time, only those its case needs, so a job is read as deep as its state requires. Every
read but the job itself may fail (RBAC above all): the failure is recorded and the diagnosis goes
on without it."""

from __future__ import annotations

from ktrain.cluster.kube import KubeCluster, server_shaped
from ktrain.cluster.why_reads import job_facts as job_facts
from ktrain.cluster.why_reads import perform

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs every cluster command 3 ms to import
    from typing import Any

    from ktrain.jobs.why.facts import Facts, Verdict

# At most this many reads beyond the job and its pods (there are eleven kinds; a log read twice at most).
MAX_READS = 12


@server_shaped
def diagnose_job(cluster: KubeCluster, facts: Facts, now: Any = None) -> Verdict:
    """The verdict on the job `facts` hold, reading what it needs."""
    import datetime as dt

    from ktrain.jobs.why.diagnosis import diagnose
    from ktrain.jobs.why.facts import UNKNOWN, Verdict

    now = now or dt.datetime.now(dt.timezone.utc)
    for _ in range(MAX_READS + 1):
        verdict = diagnose(facts, now)
        if verdict.needs is None:
            return verdict
        perform(cluster, facts, verdict.needs)
    return Verdict(UNKNOWN, f"job {facts.name}: no verdict after {MAX_READS} reads", unread=list(facts.unread.values()))


def why_job(cluster: KubeCluster, name: str) -> tuple[Facts, Verdict]:
    """`job why NAME`: the job read as the diagnosis starts from, and the verdict on it."""
    facts = job_facts(cluster, name)
    return facts, diagnose_job(cluster, facts)
