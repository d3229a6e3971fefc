"""ktrain/convert/podspec.py: v1 pod templates pruned as the API server pruned them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import UPSTREAM
from v1convert import one, pytorch, rows

from ktrain.convert.report import DROPPED


def test_fields_the_api_server_pruned_are_pruned_and_reported(tmp_path: Path) -> None:
    """Upstream's xgboostjob_v1alpha1_rabit_test.yaml puts `apiVersion: v1` and `kind: Pod` in
    its pod templates; the v1 CRD's structural schema pruned them (apiextensions-apiserver
    pruning), and a JobSet carrying them is refused."""
    job = pytorch(restart="Never")
    worker = job["spec"]["pytorchReplicaSpecs"]["Worker"]
    worker["template"] = {"apiVersion": "v1", "kind": "Pod", **worker["template"]}
    worker["template"]["spec"]["containers"][0]["imagePullPolicyy"] = "Always"
    conv = one(job)
    r = rows(conv)
    for field in ("template.apiVersion", "template.kind", "template.spec.containers[0].imagePullPolicyy"):
        assert r[f"spec.pytorchReplicaSpecs.Worker.{field}"][0] == DROPPED
    template = conv.runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
    assert set(template) == {"spec"} and "imagePullPolicyy" not in template["spec"]["containers"][0]


@pytest.mark.shared
def test_the_pod_template_field_table_matches_the_jobset_crd() -> None:
    """convert/podspec.py TYPES against the PodTemplateSpec the JobSet CRD embeds (field for field,
    object for object)."""
    crd_path = UPSTREAM / "jobset" / "jobset.x-k8s.io_jobsets.yaml"
    if not crd_path.is_file():
        pytest.skip("../shared is absent")
    from ktrain.convert.podspec import TYPES

    crd = yaml.load(crd_path.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    rjob = schema["properties"]["spec"]["properties"]["replicatedJobs"]["items"]
    template = rjob["properties"]["template"]["properties"]["spec"]["properties"]["template"]
    problems: list[str] = []

    def walk(node: dict[str, Any], type_name: str, where: str) -> None:
        fields = TYPES[type_name]
        props = node.get("properties") or {}
        if set(props) != set(fields):
            problems.append(f"{where} ({type_name}): {sorted(set(props) ^ set(fields))}")
        for key, sub in props.items():
            shape = fields.get(key)
            nested = sub.get("properties") or (sub.get("items") or {}).get("properties")
            if shape is None:
                if key in fields and nested:
                    problems.append(f"{where}.{key}: an object, listed as a leaf")
                continue
            if shape[0] == "obj":
                walk(sub, shape[1], f"{where}.{key}")
            elif shape[0] == "list":
                walk(sub["items"], shape[1], f"{where}.{key}[]")
            else:
                walk(sub["additionalProperties"], shape[1], f"{where}.{key}{{}}")

    walk(template, "PodTemplateSpec", "template")
    assert not problems
