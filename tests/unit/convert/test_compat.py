"""ktrain/convert/compat.py: the env the v1 controllers gave PyTorch, XGBoost and JAX pods."""

from __future__ import annotations

from v1convert import one, pytorch, rows


def test_pythonunbuffered_is_v1_value_and_the_users_own_is_kept() -> None:
    """pytorch/envvar.go since v1.7 (kubeflow/trainer#1860) sets "1"; a value the user set is kept."""
    conv = one(pytorch())
    env = {e["name"]: e.get("value") for e in conv.trainjob["spec"]["trainer"]["env"]}
    assert env["PYTHONUNBUFFERED"] == "1"
    cont = {
        "name": "pytorch",
        "image": "torch:2",
        "command": ["python"],
        "env": [{"name": "PYTHONUNBUFFERED", "value": "0"}],
    }
    conv = one(pytorch(container=cont))
    assert conv.trainjob["spec"]["trainer"]["env"].count({"name": "PYTHONUNBUFFERED", "value": "0"}) == 1
    assert not any(e == {"name": "PYTHONUNBUFFERED", "value": "1"} for e in conv.trainjob["spec"]["trainer"]["env"])
    assert "the user's own PYTHONUNBUFFERED kept" in rows(conv)["spec.pytorchReplicaSpecs"][2]


def test_v2_nproc_per_node_is_the_torch_policys_count() -> None:
    """ENGINE.md §6.2: numProcPerNode, else `auto` for a GPU node, else the node's CPU count."""
    from ktrain.convert.compat import v2_nproc_per_node

    assert v2_nproc_per_node(3, {"limits": {"nvidia.com/gpu": 8}}) == "3"
    assert v2_nproc_per_node(None, {"limits": {"nvidia.com/gpu": 8}}) == "auto"
    assert v2_nproc_per_node(None, {"limits": {"cpu": "4"}}) == "4"
