"""ktrain.engine.shapes: the JSON types of the free-form JobSet templates, in the API server's words."""

from __future__ import annotations

from ktrain.engine.shapes import JOBSET_SPEC, int_range_errors, shape_errors


def _messages(value: object) -> list[str]:
    return [str(e) for e in shape_errors("spec", value, JOBSET_SPEC)]


def test_a_well_typed_template_has_no_errors() -> None:
    spec = {
        "replicatedJobs": [
            {
                "name": "node",
                "replicas": 1,
                "template": {
                    "spec": {
                        "parallelism": 2,
                        "template": {
                            "spec": {
                                "containers": [
                                    {
                                        "name": "node",
                                        "env": [{"name": "A", "value": "1"}],
                                        "resources": {"limits": {"cpu": 2}},
                                    }
                                ],
                                "volumes": [{"name": "v", "emptyDir": {}}],
                            }
                        },
                    }
                },
            }
        ],
        "network": {"enableDNSHostnames": True},
    }
    assert _messages(spec) == []


def test_wrong_types_are_worded_as_the_api_server_does() -> None:
    assert _messages({"replicatedJobs": 5}) == [
        'spec.replicatedJobs: Invalid value: "integer": spec.replicatedJobs in body must be of type array: "integer"'
    ]
    assert _messages({"replicatedJobs": [{"name": {"a": 1}}]}) == [
        (
            'spec.replicatedJobs[0].name: Invalid value: "object": spec.replicatedJobs[0].name in body must be of type '
            'string: "object"'
        )
    ]
    assert _messages({"network": {"enableDNSHostnames": "yes"}})[0].endswith('must be of type boolean: "string"')


def test_integers_are_range_checked_and_integral_floats_accepted() -> None:
    rjob = {"template": {"spec": {"parallelism": 2**31, "completions": 2.0, "backoffLimit": 1.5}}}
    messages = _messages({"replicatedJobs": [rjob]})
    assert any("parallelism in body should be less than or equal to 2147483647" in m for m in messages)
    assert any('backoffLimit in body must be of type integer: "number"' in m for m in messages)
    assert not any("completions" in m for m in messages)


def test_nulls_are_unset_fields_but_null_list_items_are_refused() -> None:
    assert _messages({"replicatedJobs": None, "network": None}) == []
    assert _messages({"replicatedJobs": [None]})[0].endswith('must be of type object: "null"')


def test_unknown_fields_and_free_objects_are_not_checked() -> None:
    assert _messages({"somethingNew": 5, "replicatedJobs": [{"template": {"spec": {"selector": {"x": [1]}}}}]}) == []


def test_errors_are_bounded() -> None:
    assert len(shape_errors("spec", {"replicatedJobs": [{"name": 1}] * 500}, JOBSET_SPEC)) == 50


def test_int_range_errors() -> None:
    assert int_range_errors("x", 2**31 - 1, 32) == []
    assert "greater than or equal to -9223372036854775808" in str(int_range_errors("x", -(2**63) - 1, 64)[0])
