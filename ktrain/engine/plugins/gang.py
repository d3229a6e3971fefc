"""What both gang-scheduling plugins share: PodGroup sizing (ENGINE.md §7)."""

from __future__ import annotations

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    from ktrain.engine.info import RuntimeInfo
    from ktrain.engine.quantity import Quantity


def min_member(info: RuntimeInfo) -> int:
    # rJob `replicas` is ignored, as upstream does (§7, §16 item 23).
    return sum(ps.count for ps in info.pod_sets)


def min_resources(info: RuntimeInfo) -> dict[str, str]:
    """Σ over PodSets of single-pod requests × pod count, in canonical quantity form."""
    totals: dict[str, Quantity] = {}
    for ps in info.pod_sets:
        for name, qty in ps.single_pod_requests.items():
            scaled = qty * ps.count
            totals[name] = totals[name] + scaled if name in totals else scaled
    return {name: totals[name].canonical() for name in sorted(totals)}
