"""Upsert helpers: behaviour the rendered objects depend on."""

from ktrain.engine.apply import convert_env_vars, env_var, upsert_env_vars


def test_upsert_env_vars_with_nothing_to_add_leaves_env_absent() -> None:
    # Upstream keeps a nil env list nil; printing `env: []` would differ from the controller's object.
    container = {"name": "node", "image": "busybox"}
    upsert_env_vars(container, [])
    assert "env" not in container


def test_upsert_env_vars_replaces_in_place_and_appends_new() -> None:
    container = {"name": "node", "env": [env_var("A", "1"), env_var("B", "2")]}
    upsert_env_vars(container, iter([env_var("B", "3"), env_var("C", "4")]))
    assert container["env"] == [env_var("A", "1"), env_var("B", "3"), env_var("C", "4")]


# --- env conversion (engine audit, ENGINE.md §5.4) ----------------------------------------------


def test_env_conversion_sets_every_field_upstream_sets() -> None:
    envs = convert_env_vars(
        [
            {"name": "NO_VALUE"},
            {"name": "R", "valueFrom": {"resourceFieldRef": {"resource": "limits.memory", "divisor": "1024Ki"}}},
            {"name": "C", "valueFrom": {"configMapKeyRef": {"key": "k"}}},
        ]
    )
    assert envs == [
        {"name": "NO_VALUE", "value": ""},
        {
            "name": "R",
            "valueFrom": {"resourceFieldRef": {"containerName": "", "resource": "limits.memory", "divisor": "1Mi"}},
        },
        {"name": "C", "valueFrom": {"configMapKeyRef": {"key": "k", "name": ""}}},
    ]
