"""The bundled runtime blueprints in runtimes/*.yaml.

They are hand-written, so this checks them twice: on their own (parse, kind, name, labels),
and, when ../shared is present, against upstream's base runtimes with the release overlay
(manifests/overlays/runtimes/kustomization.yaml) applied the way kustomize would.
"""

from __future__ import annotations

import copy
import io
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
RUNTIMES_DIR = REPO / "runtimes"
SHARED = REPO.parent / "shared"
UPSTREAM_RUNTIMES = SHARED / "reference" / "upstream" / "trainer" / "runtimes"
OVERLAY_FILE = UPSTREAM_RUNTIMES / "overlay-runtimes-kustomization.yaml"

# What the v2.3.0 release overlay installs (ENGINE.md §12).
SHIPPED = (
    "torch-distributed",
    "deepspeed-distributed",
    "mlx-distributed",
    "jax-distributed",
    "xgboost-distributed",
    "torchtune-llama3.2-1b",
    "torchtune-llama3.2-3b",
    "torchtune-qwen2.5-1.5b",
)
# ktrain's own: Trainer v2 ships no runtime for these frameworks (no ML policy either); they
# carry the Training Operator v1 environment (issue #14, ktrain/convert/podenv.py).
KTRAIN_ONLY = ("tensorflow-distributed", "paddle-distributed", "mxnet-distributed")
# In the reference folder but outside the overlay: it lives in base/runtimes/data-cache/,
# which only the opt-in data-cache overlay (or the Helm flag) installs.
NOT_IN_RELEASE_OVERLAY = frozenset({"torch-distributed-with-cache"})

API_VERSION = "trainer.kubeflow.org/v1alpha1"
KIND = "ClusterTrainingRuntime"
FRAMEWORK_LABEL = "trainer.kubeflow.org/framework"
WEBHOOK_LABEL = "trainer.kubeflow.org/webhook-validation"

# Overlay keys the emulation below understands; anything else must fail loudly, not be ignored.
KNOWN_OVERLAY_KEYS = frozenset({"apiVersion", "kind", "resources", "labels", "commonLabels", "images"})
KNOWN_IMAGE_KEYS = frozenset({"name", "newName", "newTag", "digest"})
KNOWN_LABEL_ENTRY_KEYS = frozenset({"pairs", "includeSelectors", "includeTemplates", "fields"})


# --------------------------------------------------------------------------- helpers


def _load_single(path: Path) -> dict[str, Any]:
    docs = [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if d is not None]
    assert len(docs) == 1, f"{path.name}: expected one YAML document, found {len(docs)}"
    doc = docs[0]
    assert isinstance(doc, dict), f"{path.name}: top level is not a mapping"
    return doc


def _bundled(name: str) -> dict[str, Any]:
    return _load_single(RUNTIMES_DIR / f"{name}.yaml")


def _need_shared() -> None:
    if not SHARED.is_dir():
        pytest.skip("../shared is not present beside the repository")
    if not OVERLAY_FILE.is_file():
        pytest.skip(f"{OVERLAY_FILE} is missing")


def _split_image(ref: str) -> tuple[str, str, str]:
    """`registry:port/repo:tag@digest` -> (name, tag, digest); a colon before the last
    slash belongs to the registry host, not the tag."""
    rest, _, digest = ref.partition("@")
    slash = rest.rfind("/")
    colon = rest.rfind(":")
    if colon > slash:
        return rest[:colon], rest[colon + 1 :], digest
    return rest, "", digest


def _retag(ref: str, rule: dict[str, str]) -> str:
    """One kustomize `images:` rule applied to one image reference (unchanged if no match).

    kustomize matches on the name without tag/digest; a new tag drops an old digest and a new
    digest drops an old tag, unless the rule sets both.
    """
    name, tag, digest = _split_image(ref)
    if name != rule["name"]:
        return ref
    new_tag, new_digest = rule.get("newTag", ""), rule.get("digest", "")
    if new_tag and new_digest:
        tag, digest = new_tag, new_digest
    elif new_tag:
        tag, digest = new_tag, ""
    elif new_digest:
        tag, digest = "", new_digest
    out = rule.get("newName") or name
    if tag:
        out += ":" + str(tag)
    if digest:
        out += "@" + digest
    return out


def _retag_containers(node: Any, rules: list[dict[str, str]]) -> None:
    """kustomize's image transformer rewrites `image` of every item of any `containers` or
    `initContainers` list, at any depth and in any kind (CRDs included)."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("containers", "initContainers") and isinstance(value, list):
                for container in value:
                    if isinstance(container, dict) and isinstance(container.get("image"), str):
                        for rule in rules:
                            container["image"] = _retag(container["image"], rule)
            _retag_containers(value, rules)
    elif isinstance(node, list):
        for item in node:
            _retag_containers(item, rules)


def _overlay_labels(overlay: dict[str, Any]) -> dict[str, str]:
    """Labels the overlay puts on metadata.labels.

    For a custom kind like ClusterTrainingRuntime kustomize's label field specs only reach
    metadata.labels (the selector/template specs are scoped to Deployment, Job, ...), so
    `includeSelectors` makes no difference here. `includeTemplates` and custom `fields` are
    not emulated: refuse them rather than compare against a wrong expectation.
    """
    labels: dict[str, str] = dict(overlay.get("commonLabels") or {})
    for entry in overlay.get("labels") or []:
        unknown = set(entry) - KNOWN_LABEL_ENTRY_KEYS
        assert not unknown, f"overlay labels entry has keys this test does not emulate: {sorted(unknown)}"
        assert not entry.get("includeTemplates"), "overlay labels.includeTemplates is not emulated"
        assert not entry.get("fields"), "overlay labels.fields is not emulated"
        labels.update(entry.get("pairs") or {})
    return labels


def _apply_overlay(base: dict[str, Any], overlay: dict[str, Any]) -> dict[str, Any]:
    unknown = set(overlay) - KNOWN_OVERLAY_KEYS
    assert not unknown, f"overlay uses kustomize features this test does not emulate: {sorted(unknown)}"
    out = copy.deepcopy(base)
    rules: list[dict[str, str]] = list(overlay.get("images") or [])
    for rule in rules:
        bad = set(rule) - KNOWN_IMAGE_KEYS
        assert not bad, f"overlay images entry has keys this test does not emulate: {sorted(bad)}"
    _retag_containers(out, rules)
    metadata = out.setdefault("metadata", {})
    metadata["labels"] = {**(metadata.get("labels") or {}), **_overlay_labels(overlay)}
    return out


def _upstream_runtimes() -> dict[str, dict[str, Any]]:
    """Every ClusterTrainingRuntime in the upstream base files, by metadata.name."""
    found: dict[str, dict[str, Any]] = {}
    for path in sorted(UPSTREAM_RUNTIMES.glob("*.yaml")):
        if path == OVERLAY_FILE:
            continue
        for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")):
            if isinstance(doc, dict) and doc.get("kind") == KIND:
                name = doc["metadata"]["name"]
                assert name not in found, f"{name} is defined twice upstream"
                found[name] = doc
    return found


def _overlay() -> dict[str, Any]:
    overlay = yaml.safe_load(OVERLAY_FILE.read_text(encoding="utf-8"))
    assert isinstance(overlay, dict)
    return overlay


# --------------------------------------------------------------------------- the bundle on its own


def test_bundle_contains_exactly_the_shipped_runtimes() -> None:
    # The registry loads *.yaml and *.yml alike, so a stray .yml would also become a runtime.
    stems = sorted(p.stem for p in RUNTIMES_DIR.iterdir() if p.suffix in (".yaml", ".yml"))
    assert stems == sorted(SHIPPED + KTRAIN_ONLY)
    assert not list(RUNTIMES_DIR.glob("*.yml")), "bundled runtimes are named <name>.yaml"


@pytest.mark.parametrize("name", SHIPPED + KTRAIN_ONLY)
def test_runtime_is_a_cluster_training_runtime_named_after_its_file(name: str) -> None:
    doc = _bundled(name)
    assert doc["apiVersion"] == API_VERSION
    assert doc["kind"] == KIND
    assert doc["metadata"]["name"] == name
    labels = doc["metadata"]["labels"]
    assert isinstance(labels.get(FRAMEWORK_LABEL), str) and labels[FRAMEWORK_LABEL]
    # Every bundled runtime is pre-validated, as the release overlay marks it.
    assert labels.get(WEBHOOK_LABEL) == "disabled"
    assert isinstance(doc["spec"]["template"]["spec"]["replicatedJobs"], list)


@pytest.mark.parametrize("name", SHIPPED + KTRAIN_ONLY)
def test_runtime_file_opens_with_a_usage_comment(name: str) -> None:
    lines = (RUNTIMES_DIR / f"{name}.yaml").read_text(encoding="utf-8").splitlines()
    header: list[str] = []
    for line in lines:
        if not line.startswith("#"):
            break
        header.append(line)
    assert header and header[0].startswith(f"# {name}:")
    assert any(f"ktrain job render --runtime {name}" in line for line in header)


@pytest.mark.parametrize("name", SHIPPED + KTRAIN_ONLY)
def test_runtime_reads_the_same_as_yaml_1_1_and_1_2(name: str) -> None:
    # kubectl and our loader read YAML 1.1, many editors and tools 1.2; an unquoted
    # yes/no/on/off or octal-looking scalar would load differently and change the runtime.
    from ruamel.yaml import YAML

    text = (RUNTIMES_DIR / f"{name}.yaml").read_text(encoding="utf-8")
    yaml12 = YAML(typ="safe", pure=True)
    yaml12.version = (1, 2)
    assert yaml12.load(io.StringIO(text)) == yaml.safe_load(text)


# --------------------------------------------------------------------------- the overlay emulation


@pytest.mark.parametrize(
    ("ref", "rule", "expected"),
    [
        (
            "ghcr.io/kubeflow/trainer/mlx-runtime",
            {"name": "ghcr.io/kubeflow/trainer/mlx-runtime", "newTag": "v2.3.0"},
            "ghcr.io/kubeflow/trainer/mlx-runtime:v2.3.0",
        ),
        (
            "ghcr.io/kubeflow/trainer/mlx-runtime:latest",
            {"name": "ghcr.io/kubeflow/trainer/mlx-runtime", "newTag": "v2.3.0"},
            "ghcr.io/kubeflow/trainer/mlx-runtime:v2.3.0",
        ),
        # A longer name sharing the prefix is a different image.
        (
            "ghcr.io/kubeflow/trainer/mlx-runtime-extra",
            {"name": "ghcr.io/kubeflow/trainer/mlx-runtime", "newTag": "v2.3.0"},
            "ghcr.io/kubeflow/trainer/mlx-runtime-extra",
        ),
        ("localhost:5000/trainer", {"name": "localhost:5000/trainer", "newTag": "v1"}, "localhost:5000/trainer:v1"),
        ("repo/img:old@sha256:aa", {"name": "repo/img", "digest": "sha256:bb"}, "repo/img@sha256:bb"),
        ("repo/img:old", {"name": "repo/img", "newName": "mirror/img"}, "mirror/img:old"),
    ],
)
def test_kustomize_image_rule_rewrites_matching_references(ref: str, rule: dict[str, str], expected: str) -> None:
    assert _retag(ref, rule) == expected


def test_overlay_emulation_touches_container_images_and_top_level_labels_only() -> None:
    base = {
        "metadata": {"name": "x", "labels": {"a": "1"}},
        "spec": {
            "template": {
                "metadata": {"labels": {"t": "1"}},
                "spec": {
                    "replicatedJobs": [
                        {
                            "template": {
                                "spec": {
                                    "containers": [
                                        {"name": "c", "image": "img", "env": [{"name": "IMAGE", "value": "img"}]}
                                    ],
                                    "initContainers": [{"name": "i", "image": "img"}],
                                }
                            }
                        }
                    ]
                },
            }
        },
    }
    overlay = {"images": [{"name": "img", "newTag": "v9"}], "labels": [{"pairs": {"b": "2"}}]}
    out = _apply_overlay(base, overlay)
    pod = out["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]
    assert pod["containers"][0]["image"] == "img:v9"
    assert pod["initContainers"][0]["image"] == "img:v9"
    assert pod["containers"][0]["env"][0]["value"] == "img"  # env values are not images
    assert out["metadata"]["labels"] == {"a": "1", "b": "2"}
    assert out["spec"]["template"]["metadata"]["labels"] == {"t": "1"}
    assert base["metadata"]["labels"] == {"a": "1"}  # the input is not mutated


def test_overlay_emulation_refuses_kustomize_features_it_does_not_model() -> None:
    with pytest.raises(AssertionError, match="patches"):
        _apply_overlay({"metadata": {}}, {"patches": []})
    with pytest.raises(AssertionError, match="includeTemplates"):
        _apply_overlay({"metadata": {}}, {"labels": [{"pairs": {"a": "b"}, "includeTemplates": True}]})


# --------------------------------------------------------------------------- against upstream


@pytest.mark.shared
def test_upstream_release_overlay_ships_the_same_runtime_names() -> None:
    _need_shared()
    assert sorted(set(_upstream_runtimes()) - NOT_IN_RELEASE_OVERLAY) == sorted(SHIPPED)


@pytest.mark.shared
@pytest.mark.parametrize("name", SHIPPED)
def test_runtime_equals_upstream_base_with_release_overlay_applied(name: str) -> None:
    _need_shared()
    upstream = _upstream_runtimes()
    assert name in upstream, f"upstream no longer ships {name}"
    expected = _apply_overlay(upstream[name], _overlay())
    ours = _bundled(name)
    assert ours["apiVersion"] == expected["apiVersion"]
    assert ours["kind"] == expected["kind"]
    assert ours["metadata"]["name"] == expected["metadata"]["name"]
    assert ours["metadata"]["labels"] == expected["metadata"]["labels"]
    assert ours["spec"] == expected["spec"]
