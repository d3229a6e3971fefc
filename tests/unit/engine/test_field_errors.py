"""apimachinery's field errors (`ktrain.engine.field_errors`), worded as the API server words them."""

from __future__ import annotations

from ktrain.engine import field_errors as fe


def test_a_trailing_newline_is_not_part_of_a_name() -> None:
    assert fe.dns1035_label_errors("abc\n") and fe.dns1123_subdomain_errors("abc\n")
    assert not fe.dns1035_label_errors("abc")


def test_name_errors_give_each_message_with_the_length_first() -> None:
    assert fe.dns1123_label_errors("a" * 64) == ["must be no more than 63 characters"]
    assert fe.dns1123_subdomain_errors("A" * 254) == ["must be no more than 253 characters", fe.DNS1123_SUBDOMAIN_MSG]
    assert fe.dns1035_label_errors("0a")[0].startswith("a DNS-1035 label must consist of")


def test_invalid_quotes_strings_and_truncates_a_hostile_value() -> None:
    assert str(fe.invalid("spec.x", "v", "bad")).endswith('Invalid value: "v": bad')
    long = fe.invalid("spec.x", "a" * 5000, "bad")
    assert "...(truncated)" in str(long) and len(str(long)) < 400
    assert "Invalid value: true: bad" in str(fe.invalid("spec.x", True, "bad"))


def test_bounds_and_duplicates() -> None:
    assert fe.minimum("spec.n", 0, 1)[0].message.endswith("spec.n in body should be greater than or equal to 1")
    assert fe.minimum("spec.n", None, 1) == [] and fe.minimum("spec.n", 1, 1) == []
    assert fe.max_items("spec.l", [1, 2, 3], 2)[0].kind == "TooMany"
    assert fe.max_length("spec.s", "abc", 2)[0].kind == "TooLong"
    (dup,) = fe.unique_names("spec.env", [{"name": "A"}, {"name": "B"}, {"name": "A"}])
    assert dup.path == "spec.env[2]" and dup.kind == "Duplicate"


def test_string_maps_refuse_values_yaml_reads_as_other_types() -> None:
    (err,) = fe.string_map_errors("metadata.labels", {"a": "x", "b": True})
    assert err.path == "metadata.labels.b"
    assert 'must be of type string: "boolean"' in str(err)


def test_a_domain_prefixed_path_needs_a_host_and_a_path() -> None:
    assert fe.validate_domain_prefixed_path("m", "example.com/me") == []
    assert fe.validate_domain_prefixed_path("m", "")[0].kind == "Required"
    assert "domain-prefixed path" in str(fe.validate_domain_prefixed_path("m", "nohost")[0])
    assert fe.validate_domain_prefixed_path("m", "Bad_Host/x")[0].message.endswith(fe.DNS1123_SUBDOMAIN_MSG)
