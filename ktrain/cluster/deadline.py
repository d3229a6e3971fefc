"""A command's deadline on every request it makes (`job wait --timeout`, `job delete --wait
--timeout`): each request, a watch's too, gets the request timeout or the time left, whichever is
less, so that a stalling server cannot hold a command past its deadline by a whole request timeout."""

from __future__ import annotations

import time

from ktrain.cluster.kube import KubeCluster
from ktrain.cluster.transport import STREAM_IDLE_SECONDS

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar

    T = TypeVar("T")

# The least a request is given: a request sent with the deadline already past fails at once.
LEAST = 0.05


class Bounded(KubeCluster):
    """`cluster` (its transport, namespace and names) with every request's timeout cut to the time
    left before `deadline` (`time.monotonic()`)."""

    def __init__(self, cluster: KubeCluster, deadline: float) -> None:
        self.__dict__.update(cluster.__dict__)
        self.deadline = deadline

    def call(self, fn: Callable[..., T], *args: Any, what: str = "", stream: bool = False, **kwargs: Any) -> T:
        left = max(LEAST, self.deadline - time.monotonic())
        given = kwargs.get("_request_timeout")
        if given is None:
            given = (self.request_timeout, STREAM_IDLE_SECONDS) if stream else self.request_timeout
        if isinstance(given, tuple):  # (head, idle) of a stream; an idle of None: no idle limit
            kwargs["_request_timeout"] = tuple(left if part is None else min(part, left) for part in given)
        else:
            kwargs["_request_timeout"] = min(given, left)
        return super().call(fn, *args, what=what, stream=stream, **kwargs)


def bounded(cluster: KubeCluster, seconds: float | None) -> KubeCluster:
    """`cluster` whose requests end `seconds` from now at the latest (None: the cluster as is)."""
    return cluster if seconds is None else Bounded(cluster, time.monotonic() + seconds)
