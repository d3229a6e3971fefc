"""A running one-node torch job stored in the double as the controllers leave it, for tests that
run ktrain's cluster commands against it (the import and fast-path probes)."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from ktrain import constants as c


def seed_running_job(srv: Any, directory: Path, name: str = "seen", *, client_certificate: bool = True) -> Path:
    """Store `name`'s rendered objects (torch-distributed) and its rank-0 pod with a line of log;
    return the path of a kubeconfig for `srv`, authenticating with a client certificate when
    `client_certificate` (the transport that loads the most: ssl, the credentials)."""
    from ktrain.inputs.registry import RuntimeRegistry
    from ktrain.service.render import render_request
    from ktrain.service.requests import JobOverrides, RenderRequest

    doc = srv.kubeconfig()
    if client_certificate:
        cert, key = srv.client_certificate()
        doc["users"][0]["user"] = {
            "client-certificate-data": base64.b64encode(cert).decode(),
            "client-key-data": base64.b64encode(key).decode(),
        }
    kubeconfig = directory / "kubeconfig"
    kubeconfig.write_text(json.dumps(doc))
    rendered = render_request(
        RenderRequest(overrides=JobOverrides(runtime="torch-distributed", name=name)), RuntimeRegistry()
    )
    jobset = None
    for obj in rendered.result.objects:
        stored = srv.put_object(obj)
        jobset = stored if obj["kind"] == "JobSet" else jobset
    assert jobset is not None, "torch-distributed rendered no JobSet"
    pod = f"{name}-node-0-0-x1"
    srv.add_pod(
        pod,
        labels={c.JOBSET_NAME_LABEL: name, c.JOBSET_RJOB_NAME_LABEL: "node", c.JOBSET_JOB_INDEX_LABEL: "0"},
        annotations={c.JOB_COMPLETION_INDEX_ANNOTATION: "0"},
        containers=["node"],
        owner=jobset,
    )
    srv.append_log(pod, "hello from rank 0")
    return kubeconfig
