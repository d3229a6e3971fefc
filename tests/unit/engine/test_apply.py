"""Upsert helpers: behaviour the rendered objects depend on."""

from ktrain.engine.apply import env_var, upsert_env_vars


def test_upsert_env_vars_with_nothing_to_add_leaves_env_absent() -> None:
    # Upstream keeps a nil env list nil; printing `env: []` would differ from the controller's object.
    container = {"name": "node", "image": "busybox"}
    upsert_env_vars(container, [])
    assert "env" not in container


def test_upsert_env_vars_replaces_in_place_and_appends_new() -> None:
    container = {"name": "node", "env": [env_var("A", "1"), env_var("B", "2")]}
    upsert_env_vars(container, iter([env_var("B", "3"), env_var("C", "4")]))
    assert container["env"] == [env_var("A", "1"), env_var("B", "3"), env_var("C", "4")]
