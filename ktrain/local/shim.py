"""`python -m ktrain.local.shim PROGRAM ARGS...`: rewrite pod host names in the environment a
wrapper script computed inside the pod, then become PROGRAM.

ktrain's TF/Paddle/MXNet wrappers (`ktrain.convert.podenv`) build TF_CONFIG and friends from
`$KTRAIN_JOBSET` when the pod starts, so the planner cannot rewrite those values; the planner puts
this module between such a wrapper and the program instead, with the run's host and port map in
`KTRAIN_LOCAL_NETMAP` (`ktrain.local.plan.NETMAP_ENV`).
"""

from __future__ import annotations

import os
import sys

from ktrain.local.netmap import NETMAP_ENV, NetMap, Rewriter


def main(argv: list[str]) -> int:
    if not argv:
        sys.stderr.write("ktrain.local.shim: no program to run\n")
        return 2
    text = os.environ.pop(NETMAP_ENV, None)
    if text:
        # no new ports (they must agree with the other pods'); HOSTNAME is the pod's, set by the planner
        rewriter = Rewriter(NetMap.from_json(text), self_host=os.environ.get("HOSTNAME"))
        os.environ.update(rewriter.rewrite_env(dict(os.environ)))
    try:
        os.execvp(argv[0], argv)
    except OSError as exc:
        sys.stderr.write(f"ktrain.local.shim: cannot run {argv[0]}: {exc.strerror}\n")
        return 127


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
