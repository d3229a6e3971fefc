"""Kubernetes quantities: parse, add, multiply, compare and print exactly as apimachinery does,
and the component-helpers pod request formula.

Expected values marked "quantity_test.go" are taken from the tables of
k8s.io/apimachinery/pkg/api/resource/quantity_test.go (TestQuantityParse, TestQuantityString,
TestQuantityParseEmit, TestAdd, TestMul, ...); where that table gives a value rather than a
string, the string is the canonical form of that value. Pod request cases come from the
restartable-init-container tables derived from component-helpers' PodRequests tests.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from ktrain.engine.quantity import (
    BINARY_SI,
    DECIMAL_EXPONENT,
    DECIMAL_SI,
    ERR_FORMAT_WRONG,
    ERR_NUMERIC,
    ERR_SUFFIX,
    Quantity,
    QuantityError,
    matches_crd_pattern,
    max_quantity,
    pod_requests,
    sum_quantities,
)

Q = Quantity.parse
MOST_POSITIVE = 2**63 - 1


# --- parsing: value and format -----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "value", "fmt"),
    [
        # quantity_test.go TestQuantityParse
        ("0", "0", DECIMAL_SI),
        ("0n", "0", DECIMAL_SI),
        ("0Ki", "0", BINARY_SI),
        ("0Ti", "0", BINARY_SI),
        ("1", "1", DECIMAL_SI),
        ("1Ki", "1024", BINARY_SI),
        ("7Mi", str(7 * 2**20), BINARY_SI),
        ("6Gi", str(6 * 2**30), BINARY_SI),
        ("5Ti", str(5 * 2**40), BINARY_SI),
        ("4Pi", str(4 * 2**50), BINARY_SI),
        ("3Ei", str(3 * 2**60), BINARY_SI),
        ("5n", "5e-9", DECIMAL_SI),
        ("4u", "4e-6", DECIMAL_SI),
        ("3m", "3e-3", DECIMAL_SI),
        ("8k", "8e3", DECIMAL_SI),
        ("7M", "7e6", DECIMAL_SI),
        ("6G", "6e9", DECIMAL_SI),
        ("5T", "5e12", DECIMAL_SI),
        ("2P", "2e15", DECIMAL_SI),
        ("1E", "1e18", DECIMAL_SI),
        ("1E-3", "1e-3", DECIMAL_EXPONENT),
        ("1e3", "1e3", DECIMAL_EXPONENT),
        ("1E6", "1e6", DECIMAL_EXPONENT),
        ("1.3E+6", "1.3e6", DECIMAL_EXPONENT),
        ("0.5e-2", "5e-3", DECIMAL_EXPONENT),
        ("100.035k", "100035", DECIMAL_SI),
        ("0.0005k", "0.5", DECIMAL_SI),
        ("1.01E", "1.01e18", DECIMAL_SI),
        # things that saturate or round (always up, away from zero)
        ("3.001n", "4e-9", DECIMAL_SI),
        ("1.1E-9", "2e-9", DECIMAL_EXPONENT),
        ("0.0000000005", "1e-9", DECIMAL_SI),
        ("0.9n", "1e-9", DECIMAL_SI),
        ("0.00000012345", "124e-9", DECIMAL_SI),
        ("9Ei", str(MOST_POSITIVE), BINARY_SI),
        ("9223372036854775807Ki", str(MOST_POSITIVE), BINARY_SI),
        ("12E", "12e18", DECIMAL_SI),
        # fractional binary values keep BinarySI, unless they fall below one
        ("100.035Ki", "102435.84", BINARY_SI),
        ("0.5Mi", str(2**19), BINARY_SI),
        ("0.000000000001Ki", "2e-9", DECIMAL_SI),
        # written by trolls, accepted by Go
        (".001", "1e-3", DECIMAL_SI),
        (".0001k", "0.1", DECIMAL_SI),
        ("1.", "1", DECIMAL_SI),
        ("1.G", "1e9", DECIMAL_SI),
    ],
)
def test_parse_gives_the_value_and_format_of_parse_quantity(text: str, value: str, fmt: str) -> None:
    q = Q(text)
    assert q == Quantity.of(Decimal(value))
    assert q.format == fmt


@pytest.mark.parametrize("text", ["1Ki", "5n", "1.3E+6", "0.9n", "100.035Ki", "3.001n", "1.G"])
def test_signs_negate_the_value_and_keep_the_format(text: str) -> None:
    plain = Q(text)
    assert Q("-" + text) == -plain
    assert Q("-" + text).format == plain.format
    assert Q("+" + text) == plain
    assert Q("+" + text).format == plain.format


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "1.1.M",
        "1+1.0M",
        "0.1mi",
        "0.1am",
        "aoeu",
        ".5i",
        "1i",
        "-3.01i",
        "-3.01e-",
        " 1",
        "1 ",
        "1.2.3",
        "5Zi",
        "1K",
        "1e",
        "1e3.5",
        "1ee3",
        ".Ei",
    ],
)
def test_strings_parse_quantity_rejects_raise_quantity_error(bad: str) -> None:
    with pytest.raises(QuantityError):
        Q(bad)


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        ("1.1.M", ERR_FORMAT_WRONG),
        ("0.1mi", ERR_SUFFIX),
        ("1e99999999999999999999", ERR_SUFFIX),
        (".Ei", ERR_NUMERIC),
        ("", ERR_FORMAT_WRONG),
    ],
)
def test_parse_errors_carry_gos_error_text(bad: str, reason: str) -> None:
    with pytest.raises(QuantityError) as info:
        Q(bad)
    assert info.value.reason == reason
    assert repr(bad) in str(info.value)


@pytest.mark.parametrize(
    ("text", "fmt"), [(".", DECIMAL_SI), ("-", DECIMAL_SI), ("Ki", BINARY_SI), ("e3", DECIMAL_EXPONENT)]
)
def test_gos_scanner_quirks_parse_as_zero_but_fail_the_crd_pattern(text: str, fmt: str) -> None:
    q = Q(text)
    assert q.is_zero() and q.format == fmt and q.canonical() == "0"
    assert not matches_crd_pattern(text)


# --- printing ----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        # quantity_test.go TestQuantityParseEmit
        ("1Ki", "1Ki"),
        ("1Mi", "1Mi"),
        ("1Gi", "1Gi"),
        ("1024Mi", "1Gi"),
        ("1000M", "1G"),
        (".001Ki", "1024m"),
        (".000001Ki", "1024u"),
        (".000000001Ki", "1024n"),
        (".000000000001Ki", "2n"),
        # quantity_test.go TestQuantityString, "alternate" spellings
        ("307200Ki", "300Mi"),
        ("1025024Mi", "1001Gi"),
        ("1024Gi", "1Ti"),
        ("5000m", "5"),
        ("0.5", "500m"),
        ("0.001T", "1G"),
        ("1000u", "1m"),
        ("1.08", "1080m"),
        ("1080000000n", "1080m"),
        ("1000E", "1e21"),
        ("5000E", "5e21"),
        ("1000000E", "1e24"),
        (".001e12", "1e9"),
        ("0.001e0", "1e-3"),
        ("1000e-12", "1e-9"),
        ("00", "0"),
        # canonical forms of TestQuantityParse values
        ("0.0005k", "500m"),
        ("0.50000", "500m"),
        ("0.5e0", "500e-3"),
        ("0.5e-1", "50e-3"),
        ("1.2e3", "1200"),
        ("1.3E+6", "1300e3"),
        ("2.5P", "2500T"),
        ("1.01E", "1010P"),
        ("3.001n", "4n"),
        ("0.00000012345", "124n"),
        ("9Ei", "9223372036854775807"),
        ("100.035Ki", "102435840m"),
        ("0.05Gi", "53687091200m"),
        ("0.5Mi", "512Ki"),
        ("0.0000000001", "1n"),
        # the forms ktrain meets in runtimes
        ("1.5Gi", "1536Mi"),
        ("0.0001", "100u"),
        ("0.7", "700m"),
        ("2.5", "2500m"),
        ("1000", "1k"),
        ("1e3", "1e3"),
    ],
)
def test_canonical_is_what_go_string_prints(text: str, canonical: str) -> None:
    assert Q(text).canonical() == canonical
    assert str(Q(text)) == canonical


@pytest.mark.parametrize("text", ["1Ki", "1Gi", "1024Mi", "1000M", ".001Ki", "1.08", "1e9", "1.5Gi"])
def test_negative_values_print_with_a_leading_minus(text: str) -> None:
    assert Q("-" + text).canonical() == "-" + Q(text).canonical()


@pytest.mark.parametrize(
    "text",
    # quantity_test.go TestQuantityString: parsing a canonical string keeps it
    [
        "1Gi",
        "300Mi",
        "6Ki",
        "1001Gi",
        "1Ti",
        "5",
        "500m",
        "1G",
        "1m",
        "80m",
        "1080m",
        "300M",
        "1T",
        "1E",
        "1234567M",
        "3k",
        "1025",
        "1e9",
        "1e-3",
        "1e-9",
        "80e-3",
        "300e6",
        "1e12",
        "1e3",
        "3e3",
        "1n",
        "80n",
        "1080n",
        "1u",
        "80u",
        "1080u",
    ],
)
def test_canonical_strings_round_trip(text: str) -> None:
    assert Q(text).canonical() == text


@pytest.mark.parametrize(
    ("text", "printed"),
    # Go reuses the input text when its fast path finds it canonical (Quantity.s), even when it
    # is spelled differently from what String() would compute.
    [
        ("+1", "+1"),
        ("01", "01"),
        ("1.500", "1.500"),
        ("1.100m", "1.100m"),
        ("1E3", "1E3"),
        ("1e0", "1e0"),
        ("1.23e5", "1.23e5"),
        ("+1Ki", "+1Ki"),
        ("1.", "1."),
        ("1e+21", "1e+21"),
        # TestQuantityParse inputs whose fast-path scale is a multiple of three
        ("100.035k", "100.035k"),
        ("10.035M", "10.035M"),
        ("7.123456M", "7.123456M"),
        ("5.444T", "5.444T"),
    ],
)
def test_canonical_input_text_is_printed_back_verbatim(text: str, printed: str) -> None:
    assert Q(text).canonical() == printed


@pytest.mark.parametrize(
    ("text", "recomputed"),
    [
        ("+1", "1"),
        ("1.500", "1500m"),
        ("1E3", "1e3"),
        ("1e0", "1"),
        ("+1Ki", "1Ki"),
        ("100.035k", "100035"),
        ("10.035M", "10035k"),
        ("5.444T", "5444G"),
    ],
)
def test_arithmetic_forgets_the_input_text(text: str, recomputed: str) -> None:
    assert (Q(text) * 1).canonical() == recomputed
    assert (Q(text) + Q("0")).canonical() == recomputed
    assert sum_quantities([Q(text)]).canonical() == recomputed


def test_binary_values_print_as_decimal_below_1024_or_when_fractional() -> None:
    assert Quantity.of(5, BINARY_SI).canonical() == "5"
    assert Quantity.of(Decimal("0.5"), BINARY_SI).canonical() == "500m"
    assert Quantity.of(1025, BINARY_SI).canonical() == "1025"
    assert Quantity.of(Decimal("1234.567"), BINARY_SI).canonical() == "1234567m"
    assert Quantity.of(2**63, BINARY_SI).canonical() == "8Ei"  # TestZeroSubMostNegativeInheritsFormat


def test_decimal_exponent_format_prints_exponents_in_steps_of_three() -> None:
    assert Quantity.of(Decimal("1e9"), DECIMAL_EXPONENT).canonical() == "1e9"
    assert Quantity.of(Decimal("80e-3"), DECIMAL_EXPONENT).canonical() == "80e-3"
    assert Quantity.of(Decimal("300e6"), DECIMAL_EXPONENT).canonical() == "300e6"
    assert Quantity.of(0, DECIMAL_EXPONENT).canonical() == "0"


def test_huge_exponents_are_handled_without_expanding_the_number() -> None:
    assert Q("1e2000000000").canonical() == "100e1999999998"
    assert Q("1e-2000000000").canonical() == "1e-9"


# --- numbers as YAML/JSON gives them -----------------------------------------------------------------
@pytest.mark.parametrize(
    ("value", "canonical"),
    [
        (4, "4"),
        (1000, "1k"),
        (-2, "-2"),
        (0.7, "700m"),
        (1.0, "1"),
        (0.5, "500m"),
        (123456.789, "123456.789"),
        (1e16, "10P"),
        (1e21, "1e+21"),
        (1e-7, "100e-9"),
        (0.000001, "1u"),
    ],
)
def test_numbers_are_read_as_the_json_text_go_would_see(value: int | float, canonical: str) -> None:
    assert Q(value).canonical() == canonical


@pytest.mark.parametrize("bad", [True, float("nan"), float("inf"), None, [1]])
def test_non_quantity_values_are_rejected(bad: Any) -> None:
    with pytest.raises(QuantityError):
        Q(bad)


def test_from_json_trims_whitespace_and_reads_null_as_zero() -> None:
    assert Quantity.from_json(" 1 ").canonical() == "1"
    assert Quantity.from_json("\t2Gi\n").canonical() == "2Gi"
    assert Quantity.from_json(None).is_zero()
    assert Quantity.from_json(0.25).canonical() == "250m"
    with pytest.raises(QuantityError):
        Quantity.from_json("   ")


@pytest.mark.parametrize(
    ("text", "ok"),
    [
        ("500m", True),
        ("1.5Gi", True),
        ("+1", True),
        ("1e3", True),
        ("1.5e-3", True),
        ("1.", True),
        (".5", True),
        (".", False),
        ("Ki", False),
        (" 1", False),
        ("1K", False),
        ("1e1.5", True),
        ("-", False),
    ],
)
def test_crd_pattern_is_the_api_servers_check(text: str, ok: bool) -> None:
    assert matches_crd_pattern(text) is ok


# --- arithmetic ---------------------------------------------------------------------------------------
def test_products_and_sums_from_the_engine_spec() -> None:
    assert (Q("500m") * 3).canonical() == "1500m"
    assert (Q("1.5Gi") * 2).canonical() == "3Gi"
    assert (Q("2Gi") * 4).canonical() == "8Gi"
    assert (3 * Q("500m")).canonical() == "1500m"
    assert (Q("1") * 30 + Q("1") * 2).canonical() == "32"
    assert (Q("512Mi") + Q("2Gi")).canonical() == "2560Mi"


def test_add_keeps_the_left_format_unless_the_left_is_zero() -> None:
    # quantity_test.go TestAdd: 10 (DecimalSI) + 1 (BinarySI) stays DecimalSI, and vice versa
    assert (Q("10") + Quantity.of(1, BINARY_SI)).format == DECIMAL_SI
    assert (Quantity.of(10, BINARY_SI) + Q("1")).format == BINARY_SI
    # the same value printed in each operand's format
    assert (Q("1024000") + Q("24Ki")).canonical() == "1048576"
    assert (Q("24Ki") + Q("1024000")).canonical() == "1Mi"
    # TestQuantityAddZeroPreservesSuffix: zero on either side keeps the suffix
    assert (Q("0") + Q("1Gi")).canonical() == "1Gi"
    assert (Q("1Gi") + Q("0")).canonical() == "1Gi"
    assert (Q("100m") + Q("0")).canonical() == "100m"
    assert (Q("0") + Q("100m")).canonical() == "100m"
    # a zero produced by multiplication still adopts the other format
    assert (Q("5") * 0 + Q("3Gi")).canonical() == "3Gi"


def test_sub_follows_the_same_format_rule() -> None:
    assert (Q("0") - Q("1Gi")).canonical() == "-1Gi"  # TestQuantitySubZeroPreservesSuffix
    assert (Q("1Gi") - Q("0")).canonical() == "1Gi"
    assert (Q("10") - Q("1")).canonical() == "9"
    assert (Quantity.of(10, BINARY_SI) - Q("1")).format == BINARY_SI


def test_mul_is_exact_beyond_int64() -> None:
    # quantity_test.go TestMul
    assert Q("10") * 10 == Q("100")
    assert Q("-50") * -50 == Q("2500")
    assert (Quantity.of(MOST_POSITIVE) * 2).canonical() == str(MOST_POSITIVE * 2)
    assert (Quantity.of(MOST_POSITIVE) * 10).canonical() == str(MOST_POSITIVE) + "0"
    assert (Quantity.of(-(2**63)) * -1).canonical() == str(2**63)
    assert (Q("10") * 0).is_zero()
    assert (Quantity.of(10, BINARY_SI) * -1).format == BINARY_SI


def test_mul_rejects_non_integers() -> None:
    with pytest.raises(TypeError):
        Q("1") * 1.5  # type: ignore[operator]
    with pytest.raises(TypeError):
        Q("1") * True  # type: ignore[operator]


def test_sum_quantities_starts_from_zero() -> None:
    assert sum_quantities([]).canonical() == "0"
    assert sum_quantities([Q("0"), Q("1Gi"), Q("512Mi")]).canonical() == "1536Mi"
    assert sum_quantities([Q("250m")] * 4).canonical() == "1"


# --- comparison and accessors ----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("x", "y", "expect"),
    # quantity_test.go TestQuantityCmp
    [("0", "0", 0), ("100m", "50m", 1), ("50m", "100m", -1), ("10000T", "100Gi", 1), ("1Gi", "1073741824", 0)],
)
def test_cmp_compares_values(x: str, y: str, expect: int) -> None:
    assert Q(x).cmp(Q(y)) == expect
    assert Q(y).cmp(Q(x)) == -expect
    assert (Q(x) == Q(y)) is (expect == 0)
    assert (Q(x) < Q(y)) is (expect < 0)
    assert (Q(x) >= Q(y)) is (expect >= 0)


def test_equal_values_hash_equal_whatever_their_format() -> None:
    assert Q("1Gi") == Q("1073741824") == Q("1.073741824G")
    assert len({Q("1Gi"), Q("1073741824"), Q("1024Mi")}) == 1
    assert Q("1") != "1"


def test_max_quantity_keeps_the_first_on_a_tie() -> None:
    binary, decimal = Q("1Gi"), Q("1073741824")
    assert max_quantity(binary, decimal) is binary
    assert max_quantity(decimal, binary) is decimal
    assert max_quantity(Q("1"), Q("1500m")).canonical() == "1500m"
    assert max_quantity(Q("2"), Q("1500m")).canonical() == "2"


@pytest.mark.parametrize(
    ("text", "value", "milli"),
    [
        ("2500m", 3, 2500),
        ("0.7", 1, 700),
        ("4", 4, 4000),
        ("1n", 1, 1),
        ("1Ki", 1024, 1024000),
        ("-1.5", -2, -1500),
        ("0", 0, 0),
    ],
)
def test_value_and_milli_value_round_away_from_zero(text: str, value: int, milli: int) -> None:
    assert Q(text).ceil_int() == value
    assert Q(text).milli_value() == milli


def test_is_zero_and_sign() -> None:
    assert Q("0").is_zero() and Q("0Mi").is_zero() and Q("-0.0").is_zero()
    assert not Q("1n").is_zero()
    assert (Q("-1").sign(), Q("0").sign(), Q("1m").sign()) == (-1, 0, 1)


def test_quantities_are_immutable() -> None:
    q = Q("1")
    with pytest.raises(AttributeError):
        q.format = BINARY_SI  # type: ignore[misc]


# --- pod requests -------------------------------------------------------------------------------------
def _container(
    requests: dict[str, Any] | None = None, *, restart_always: bool = False, limits: dict[str, Any] | None = None
) -> dict[str, Any]:
    resources: dict[str, Any] = {}
    if requests is not None:
        resources["requests"] = requests
    if limits is not None:
        resources["limits"] = limits
    container: dict[str, Any] = {"name": "c", "resources": resources}
    if restart_always:
        container["restartPolicy"] = "Always"
    return container


def _printed(reqs: dict[str, Quantity]) -> dict[str, str]:
    return {name: q.canonical() for name, q in reqs.items()}


def test_pod_requests_sum_regular_containers() -> None:
    spec = {"containers": [_container({"cpu": "1000m", "memory": "1G"}), _container({"cpu": "2000m", "memory": "1G"})]}
    assert _printed(pod_requests(spec)) == {"cpu": "3", "memory": "2G"}


def test_pod_requests_take_the_largest_init_container_when_it_exceeds_the_sum() -> None:
    spec = {
        "initContainers": [_container({"cpu": "2000m", "memory": "5G"}), _container({"cpu": "2000m", "memory": "1G"})],
        "containers": [_container({"cpu": "1000m", "memory": "1G"}), _container({"cpu": "2000m", "memory": "1G"})],
    }
    assert _printed(pod_requests(spec)) == {"cpu": "3", "memory": "5G"}


def test_pod_requests_add_sidecars_to_the_sum() -> None:
    spec = {"initContainers": [_container({"cpu": "1"}, restart_always=True)], "containers": [_container({"cpu": "1"})]}
    assert _printed(pod_requests(spec)) == {"cpu": "2"}


def test_pod_requests_with_several_sidecars() -> None:
    # max(5, sidecars 1+2+3 + regular 1) = 7
    spec = {
        "initContainers": [
            _container({"cpu": "5"}),
            _container({"cpu": "1"}, restart_always=True),
            _container({"cpu": "2"}, restart_always=True),
            _container({"cpu": "3"}, restart_always=True),
        ],
        "containers": [_container({"cpu": "1"})],
    }
    assert _printed(pod_requests(spec)) == {"cpu": "7"}


def test_an_init_container_needs_the_sidecars_started_before_it_only() -> None:
    # init-2 needs 5 + sidecars 1+2 = 8; sidecar 3 starts after it
    spec = {
        "initContainers": [
            _container({"cpu": "5"}),
            _container({"cpu": "1"}, restart_always=True),
            _container({"cpu": "2"}, restart_always=True),
            _container({"cpu": "5"}),
            _container({"cpu": "3"}, restart_always=True),
        ],
        "containers": [_container({"cpu": "1"})],
    }
    assert _printed(pod_requests(spec)) == {"cpu": "8"}


def test_sidecar_init_and_regular_containers() -> None:
    spec = {
        "initContainers": [_container({"cpu": "10"}, restart_always=True), _container({"cpu": "200"})],
        "containers": [_container({"cpu": "100"})],
    }
    assert _printed(pod_requests(spec)) == {"cpu": "210"}


def test_pod_requests_add_overhead() -> None:
    spec = {
        "containers": [_container({"cpu": "1000m", "memory": "1G"}), _container({"cpu": "2000m", "memory": "1G"})],
        "overhead": {"cpu": "500m", "memory": "1G"},
    }
    assert _printed(pod_requests(spec)) == {"cpu": "3500m", "memory": "3G"}


def test_pod_level_requests_replace_supported_resources_then_overhead_is_added() -> None:
    spec = {
        "resources": {"requests": {"cpu": "250", "memory": "100Mi", "hugepages-1Mi": "2Gi", "example.com/foo": "7"}},
        "initContainers": [_container({"cpu": "10"}, restart_always=True), _container({"cpu": "200"})],
        "containers": [_container({"cpu": "100", "example.com/foo": "1"})],
    }
    assert _printed(pod_requests(spec)) == {
        "cpu": "250",
        "example.com/foo": "1",
        "memory": "100Mi",
        "hugepages-1Mi": "2Gi",
    }
    spec["overhead"] = {"cpu": "250", "memory": "100Mi"}
    assert _printed(pod_requests(spec))["cpu"] == "500"
    assert _printed(pod_requests(spec))["memory"] == "200Mi"


def test_pod_level_requests_of_unsupported_resources_are_ignored() -> None:
    spec = {
        "resources": {"requests": {"nvidia.com/gpu": "4", "hugepages": "1Gi"}},
        "containers": [_container({"cpu": "1"})],
    }
    assert _printed(pod_requests(spec)) == {"cpu": "1"}


def test_limits_never_count() -> None:
    spec = {
        "containers": [
            _container({"cpu": "2"}, limits={"cpu": "4", "nvidia.com/gpu": "8"}),
            _container(limits={"memory": "1Gi"}),
        ]
    }
    assert _printed(pod_requests(spec)) == {"cpu": "2"}
    assert pod_requests({}) == {}


def test_the_init_container_example_from_the_engine_spec() -> None:
    spec = {
        "containers": [_container({"cpu": "2", "memory": "8Gi"}, limits={"cpu": "9"})],
        "initContainers": [
            _container({"cpu": "100m", "memory": "128Mi"}, restart_always=True),
            _container({"cpu": "4", "memory": "1Gi"}),
        ],
        "overhead": {"cpu": "10m"},
    }
    # containers + sidecar = 2100m / 8320Mi; init needs 4 + 100m = 4100m / 1152Mi; max, then overhead
    assert _printed(pod_requests(spec)) == {"cpu": "4110m", "memory": "8320Mi"}


def test_pod_requests_keep_formats_and_texts_as_go_does() -> None:
    # a lone request is deep-copied: Go keeps its parsed text until arithmetic touches it
    lone = pod_requests({"containers": [_container({"cpu": "+1"})]})["cpu"]
    assert lone.canonical() == "+1"
    assert (lone * 1).canonical() == "1"
    # on a tie between the containers' sum and an init container, the sum (and its format) stays
    tie = pod_requests(
        {"containers": [_container({"memory": "1Gi"})], "initContainers": [_container({"memory": "1073741824"})]}
    )["memory"]
    assert tie.format == BINARY_SI and (tie * 2).canonical() == "2Gi"
    bigger = pod_requests(
        {"containers": [_container({"memory": "1000Mi"})], "initContainers": [_container({"memory": "2G"})]}
    )["memory"]
    assert bigger.format == DECIMAL_SI and (bigger * 2).canonical() == "4G"
    # a non-restartable init container's own format wins over the sidecars added to it
    mixed = pod_requests(
        {"initContainers": [_container({"memory": "1Gi"}, restart_always=True), _container({"memory": "3000M"})]}
    )["memory"]
    assert mixed.format == DECIMAL_SI and mixed.canonical() == "4073741824"


def test_pod_requests_read_values_as_a_typed_pod_spec_would() -> None:
    spec = {"containers": [_container({"cpu": 0.5, "memory": " 1Gi "}), _container({"cpu": 2, "memory": None})]}
    assert _printed(pod_requests(spec)) == {"cpu": "2500m", "memory": "1Gi"}
    with pytest.raises(QuantityError):
        pod_requests({"containers": [_container({"cpu": "lots"})]})


def test_resources_per_node_rejects_what_the_crd_pattern_rejects() -> None:
    from ktrain.engine.validation import _quantity_errors

    errors = _quantity_errors("spec.trainer.resourcesPerNode", {"limits": {"cpu": "Ki", "memory": "2Gi"}})
    assert [e.path for e in errors] == ["spec.trainer.resourcesPerNode.limits[cpu]"]
