"""Run the end-to-end suite against the API-server double, as a stand-in for a bare
kube-apiserver: every CRD served, no controllers, and (by default) no garbage collector, so
`job delete` must remove companions itself as it would have to on a bare API server.

    .venv/bin/python tests/e2e/run_against_double.py [--with-gc] [pytest args...]

Tests marked `needs_pods` (logs of a job that ran) are deselected: the double runs no pods.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS))


def main(argv: list[str]) -> int:
    import pytest
    from apiserver import ApiServerDouble

    with_gc = "--with-gc" in argv
    args = [a for a in argv if a != "--with-gc"]
    with ApiServerDouble(token="e2e-token", tls=True) as srv, tempfile.TemporaryDirectory() as tmp:
        if not with_gc:
            cluster = srv.cluster
            cluster._delete_tree = lambda rt, obj, policy: cluster._remove(rt, obj)
        kubeconfig = srv.write_kubeconfig(Path(tmp) / "kubeconfig")
        os.environ["KTRAIN_E2E_KUBECONFIG"] = str(kubeconfig)
        if not srv.schema_validation:  # ../shared (the CRD schemas) is absent
            os.environ["KTRAIN_E2E_NO_CRD_SCHEMAS"] = "1"
        # No controller runs pods here: the tests that need them are left out (not skipped).
        marks = "e2e and not needs_pods"
        return int(pytest.main(["-m", marks, "-p", "no:cacheprovider", str(TESTS / "e2e"), *args]))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
