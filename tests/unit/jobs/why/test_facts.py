"""`ktrain.jobs.why.facts`: what a diagnosis knows about a job (its pods' main container) and the
document a verdict prints as.

The objects are tests/unit/jobs/why/objects.py's.
"""

from __future__ import annotations

from ktrain.jobs.why.facts import document, main_container

from .objects import facts, jobset, pod, settle


def test_the_main_container_is_kubectls_default_else_node() -> None:
    p = pod(0)
    p["spec"]["containers"] = [{"name": "sidecar"}, {"name": "node"}]
    assert main_container(p) == "node"
    p["metadata"]["annotations"]["kubectl.kubernetes.io/default-container"] = "sidecar"
    assert main_container(p) == "sidecar"


def test_the_document_has_a_fixed_key_order() -> None:
    verdict, _ = settle(facts(jobset(suspend=True), []), {})
    assert list(document(verdict)) == ["reason", "message", "evidence", "next", "unread"]
