"""A fuzz of ktrain's cluster client (issue #25): a server on 127.0.0.1 answers with bytes Hypothesis
builds — status lines, 1xx answers, headers, Content-Length and chunked framing, JSON of any
shape, cut anywhere — and `job list` / `job get` through both transports must either return what
a valid answer says or raise one KtrainError with a cluster exit code, within the deadline. About
half a minute in all; KTRAIN_CLIENT_FUZZ_EXAMPLES changes the number of answers per transport."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from apiserver.hostile import HostileServer, raw
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ktrain.cluster.connection import ConnectionOptions
from ktrain.cluster.kube import connect
from ktrain.errors import ExitCode, KtrainError
from ktrain.service import job_get, job_list

pytestmark = pytest.mark.both_transports

EXAMPLES = int(os.environ.get("KTRAIN_CLIENT_FUZZ_EXAMPLES", "300"))
DEADLINE = 1.0

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=20,
)
names = st.text(alphabet="abc-\x1b\n", min_size=1, max_size=8)
objects = st.fixed_dictionaries(
    {
        "kind": st.sampled_from(["JobSet", "TrainJob"]),
        "apiVersion": st.sampled_from(["jobset.x-k8s.io/v1alpha2", "trainer.kubeflow.org/v1alpha1"]),
        "metadata": st.fixed_dictionaries(
            {"name": names, "namespace": st.just("team-a")},
            optional={"labels": json_values, "annotations": json_values, "ownerReferences": json_values},
        ),
        "spec": json_values,
        "status": json_values,
    }
)
plausible = st.fixed_dictionaries(
    {
        "kind": st.sampled_from(["JobSetList", "TrainJobList", "PodList", "List", "JobSet", "TrainJob", 5]),
        "metadata": st.one_of(st.just({}), st.fixed_dictionaries({"continue": st.sampled_from(["", "t", 5])})),
        "items": st.one_of(
            json_values,
            st.lists(
                st.fixed_dictionaries(
                    {"metadata": st.fixed_dictionaries({"name": names | json_values}), "spec": json_values}
                )
                | objects,
                max_size=3,
            ),
        ),
    }
)
bodies = st.one_of(
    json_values.map(lambda v: json.dumps(v).encode()),
    plausible.map(lambda v: json.dumps(v).encode()),
    objects.map(lambda v: json.dumps(v).encode()),
    st.binary(max_size=200),
)
statuses = st.one_of(
    st.sampled_from(
        [b"HTTP/1.1 200 OK", b"HTTP/1.1 404 Not Found", b"HTTP/1.1 500 Oops", b"HTTP/1.0 200 OK", b"HTTP/1.1 204 No"]
    ),
    st.sampled_from(["²00", "4²5", "1_0", "99", "2000", " 200", "-1"]).map(lambda c: f"HTTP/1.1 {c} X".encode()),
    st.binary(max_size=30),
)


@st.composite
def answers(draw: st.DrawFn) -> bytes:
    body = draw(bodies)
    head = [draw(statuses)]
    interim = draw(st.integers(0, 7))
    framing = draw(st.sampled_from(["length", "chunked", "close", "bad-length"]))
    if framing == "length":
        head.append(b"Content-Length: %d" % len(body))
    elif framing == "bad-length":
        head.append(b"Content-Length: " + draw(st.sampled_from([b"-1", b"1e3", b"\xb2", b"9" * 40, b"3, 4"])))
    elif framing == "chunked":
        head.append(b"Transfer-Encoding: chunked")
        cut = draw(st.integers(0, len(body)))
        body = b"%x\r\n%s\r\n%x\r\n%s\r\n0\r\n\r\n" % (cut, body[:cut], len(body) - cut, body[cut:])
    head += draw(st.lists(st.sampled_from([b"X-A: b", b"Connection: close", b"Bad header", b": x"]), max_size=3))
    data = b"HTTP/1.1 100 Continue\r\n\r\n" * interim + b"\r\n".join(head) + b"\r\n\r\n" + body
    if draw(st.booleans()):
        data = data[: draw(st.integers(0, len(data)))]  # cut anywhere
    return data


@pytest.fixture(autouse=True)
def _client_imported(kube_transport: str) -> None:
    if kube_transport == "kubernetes":
        import kubernetes.client  # noqa: F401


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(answer=answers(), read=st.sampled_from(["list", "get"]))
def test_any_answer_is_a_result_or_one_cluster_error_in_time(tmp_path: Path, answer: bytes, read: str) -> None:
    with HostileServer(raw(answer)) as srv:
        kc = srv.write_kubeconfig(tmp_path / "kc")
        cluster = connect(ConnectionOptions(kubeconfig=str(kc), request_timeout=DEADLINE))
        started = time.monotonic()
        try:
            if read == "list":
                job_list.list_jobs(cluster)
            else:
                job_get.get_job(cluster, "x")
        except KtrainError as exc:
            assert exc.exit_code in (ExitCode.CLUSTER, ExitCode.NOT_FOUND), (type(exc), exc)
            assert "\x1b" not in exc.message
        took = time.monotonic() - started
    # every request of the read gets the deadline: a list makes up to three (JobSets, TrainJobs, pods)
    assert took < 3 * DEADLINE + 1.0, took
