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
