"""Property tests (Hypothesis) of `ktrain-krm`'s input: any ResourceList (TrainJobs with hostile
specs, odd resources, odd function configurations, in YAML or JSON) gives a ResourceList and exit
0 or 1, or a KtrainError; never another exception. The resources it does not render come out as
they went in.

Bounded for CI (a fixed number of small examples, no example database); `KTRAIN_FUZZ_SCALE=20`
searches longer.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

import pytest

hypothesis = pytest.importorskip("hypothesis")
import yaml  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from ktrain import constants as c  # noqa: E402
from ktrain.cli.krm import run_krm  # noqa: E402
from ktrain.errors import KtrainError  # noqa: E402
from ktrain.output.yamltext import dump  # noqa: E402

SCALE = float(os.environ.get("KTRAIN_FUZZ_SCALE", "1"))
BOUNDED = settings(
    max_examples=max(1, int(40 * SCALE)),
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**40), max_value=2**40),
    st.text(max_size=12),
    st.sampled_from(["on", "n", "0777", "12:30", "~", "", "-1", "1e3", "torch-distributed"]),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(min_size=1, max_size=8), inner, max_size=3)
    ),
    max_leaves=12,
)
names = st.one_of(st.sampled_from(["t1", "a-b", "x" * 70, "UPPER", ""]), st.text(max_size=10))


@st.composite
def trainjobs(draw: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "runtimeRef": draw(
            st.one_of(
                st.fixed_dictionaries(
                    {"name": st.sampled_from(["torch-distributed", "deepspeed-distributed", "nope"])}
                ),
                values,
            )
        )
    }
    if draw(st.booleans()):
        spec["trainer"] = draw(
            st.one_of(
                st.fixed_dictionaries(
                    {"numNodes": st.one_of(st.integers(-3, 5), values), "command": st.lists(st.text(max_size=5))}
                ),
                values,
            )
        )
    meta: Any = draw(
        st.one_of(st.fixed_dictionaries({"name": names, "namespace": st.sampled_from(["ml", ""])}), values)
    )
    return {"apiVersion": c.TRAINER_API_VERSION, "kind": c.TRAINJOB_KIND, "metadata": meta, "spec": spec}


others = st.fixed_dictionaries(
    {
        "apiVersion": st.sampled_from(["v1", "apps/v1", "example.com/v1"]),
        "kind": st.sampled_from(["ConfigMap", "Deployment", "Thing"]),
        "metadata": st.fixed_dictionaries({"name": names}),
        "data": values,
    }
)
configs = st.one_of(
    st.none(),
    values,
    st.fixed_dictionaries(
        {"apiVersion": st.just("ktrain.io/v1alpha1"), "kind": st.just("KtrainRender"), "spec": values}
    ),
    st.fixed_dictionaries({"apiVersion": st.just("v1"), "kind": st.just("ConfigMap"), "data": values}),
)


@BOUNDED
@given(items=st.lists(st.one_of(trainjobs(), others), max_size=4), config=configs, as_json=st.booleans())
def test_any_resource_list_gives_a_resource_list_or_a_ktrain_error(
    items: list[dict[str, Any]], config: Any, as_json: bool
) -> None:
    rl: dict[str, Any] = {"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": items}
    if config is not None:
        rl["functionConfig"] = config
    # YAML as a careful writer (go-yaml v3, ktrain's own) writes it: strings quoted where a YAML 1.1 or
    # 1.2 reader would take them for something else (PyYAML writes `0E0` plain, a float in YAML 1.2)
    text = json.dumps(rl) if as_json else dump(rl)
    started = time.monotonic()
    try:
        output, code = run_krm(text)
    except KtrainError as exc:
        assert exc.message
        return
    finally:
        assert time.monotonic() - started < 10
    assert code in (0, 1)
    out = yaml.safe_load(output)  # what the orchestrator does (JSON is YAML)
    assert out["kind"] == "ResourceList"
    if code == 1:
        assert any(r["severity"] == "error" for r in out["results"])
    passed = [i for i in out["items"] if i.get("kind") in ("ConfigMap", "Deployment", "Thing")]
    rendered_kinds = {"ConfigMap"}  # a TrainJob's hostfile or code maps are ConfigMaps too
    originals = [i for i in items if i.get("kind") != c.TRAINJOB_KIND]
    for original in originals:
        if original["kind"] in rendered_kinds:
            assert original in passed or not original["metadata"]["name"]
        else:
            assert original in passed
