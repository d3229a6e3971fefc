"""Kubernetes resource quantities, reproducing k8s.io/apimachinery/pkg/api/resource.Quantity.

ktrain prints PodGroup ``minResources`` (sums of per-pod requests × pod counts) and the
container resources of the JobSet it renders; both must be byte-identical to what the
upstream controller serialises. This module therefore mirrors the Go type rather than
"some" quantity arithmetic:

* ``Quantity.parse`` follows ``ParseQuantity``: the same scanner (including its quirks,
  e.g. ``"."``, ``"-"`` and ``"Ki"`` parse as zero), nano round-up away from zero, the
  BinarySI cap at 2^63-1 and the BinarySI→DecimalSI switch for values below one.
* A parsed string that is already canonical is remembered and printed back verbatim, as
  Go caches it in ``Quantity.s`` (``"+1"`` prints ``+1``, ``"1.500"`` prints ``1.500``).
  Arithmetic forgets it, as Go's ``Add``/``Sub``/``Mul`` clear ``s``.
* ``canonical()`` is ``String()`` / ``CanonicalizeBytes``.
* ``+`` and ``-`` keep the left operand's format unless it is zero, in which case the result
  takes the right operand's format (Go ``Add``/``Sub``); ``*`` keeps the format (``Mul``).

Values are held as exact ``decimal.Decimal`` numbers under an unbounded context, so there
is no float anywhere and no int64 overflow (Go falls back to ``inf.Dec`` for those).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from decimal import MAX_EMAX, MAX_PREC, MIN_EMIN, ROUND_UP, Context, Decimal

from ktrain.util.structs import field, struct

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    from typing import Any

DECIMAL_SI = "DecimalSI"
BINARY_SI = "BinarySI"
DECIMAL_EXPONENT = "DecimalExponent"
FORMATS = (DECIMAL_SI, BINARY_SI, DECIMAL_EXPONENT)

# Go's error texts (quantity.go ErrFormatWrong / ErrNumeric / ErrSuffix).
SPLIT_RE_STRING = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
ERR_FORMAT_WRONG = f"quantities must match the regular expression '{SPLIT_RE_STRING}'"
ERR_NUMERIC = "unable to parse numeric part of quantity"
ERR_SUFFIX = "unable to parse quantity's suffix"

# The OpenAPI pattern every quantity field carries in CRDs (TrainJob, runtimes, JobSet).
# The API server rejects strings that do not match it before ParseQuantity ever runs, and
# it is stricter than ParseQuantity (no ".", no "Ki" alone, no whitespace).
CRD_QUANTITY_PATTERN = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|"
    r"([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)

_DIGITS = frozenset("0123456789")
_SUFFIX_CHARS = frozenset("eEinumkKMGTP")
_DECIMAL_SUFFIXES = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL_SUFFIX_BY_EXP = {exp: sfx for sfx, exp in _DECIMAL_SUFFIXES.items()}
_BINARY_SUFFIX_BY_POWER = {exp // 10: sfx for sfx, exp in _BINARY_SUFFIXES.items()}

_MAX_INT64 = 2**63 - 1
_MAX_INT64_FACTORS = 18  # maxInt64Factors: decimal digits that always fit an int64
_NANO_SCALE = -9
_NANO = Decimal("1e-9")
_MAX_ALLOWED = Decimal(_MAX_INT64)

# Exact arithmetic: with the maximum precision, add/multiply never round.
_EXACT = Context(prec=MAX_PREC, Emax=MAX_EMAX, Emin=MIN_EMIN)

# Go's unicode.IsSpace set, which strings.TrimSpace strips in UnmarshalJSON.
_GO_SPACE = (
    "\t\n\v\f\r \x85\xa0\u1680" + "".join(chr(c) for c in range(0x2000, 0x200B)) + "\u2028\u2029\u202f\u205f\u3000"
)


class QuantityError(ValueError):
    """A value that ParseQuantity rejects. ``reason`` is Go's error text."""

    def __init__(self, value: object, reason: str) -> None:
        super().__init__(f"invalid quantity {value!r}: {reason}")
        self.value = value
        self.reason = reason


@struct(frozen=True, slots=True, eq=False)
class Quantity:
    """An immutable resource.Quantity: exact ``amount``, a ``format`` and, when parsed from an
    already-canonical string, that string (printed back as is)."""

    amount: Decimal = Decimal(0)
    format: str = DECIMAL_SI
    # Go's cached ``s``: the input text when ParseQuantity found it canonical (fast path only).
    cached: str | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.format not in FORMATS:
            raise ValueError(f"unknown quantity format {self.format!r}; expected one of {FORMATS}")
        amount: object = self.amount  # typed Decimal, and checked at run time all the same
        if not isinstance(amount, Decimal) or not amount.is_finite():
            raise ValueError(f"quantity amount must be a finite Decimal, not {amount!r}")

    # --- construction ---------------------------------------------------------------------------
    @classmethod
    def of(cls, value: int | Decimal, fmt: str = DECIMAL_SI) -> Quantity:
        """NewQuantity / NewDecimalQuantity: a quantity with this exact value (no rounding)."""
        if isinstance(value, bool) or not isinstance(value, (int, Decimal)):
            raise TypeError(f"quantity value must be an int or Decimal, not {value!r}")
        return cls(Decimal(value), fmt)

    @classmethod
    def parse(cls, value: str | int | float | Quantity) -> Quantity:
        """ParseQuantity. Strings are parsed strictly (no surrounding whitespace); ints and
        floats are read as the JSON number Go's YAML→JSON conversion would produce."""
        if isinstance(value, Quantity):
            return value
        if isinstance(value, str):
            return _parse_string(value)
        return _parse_string(_json_number_text(value))

    @classmethod
    def from_json(cls, value: str | int | float | Quantity | None) -> Quantity:
        """UnmarshalJSON: like ``parse`` but surrounding whitespace is trimmed and ``null``
        (None) is the zero quantity. This is how a typed pod spec reads its requests."""
        if value is None:
            return cls()
        if isinstance(value, str):
            return _parse_string(value.strip(_GO_SPACE))
        return cls.parse(value)

    # --- arithmetic -----------------------------------------------------------------------------
    def __add__(self, other: Quantity) -> Quantity:
        if not isinstance(other, Quantity):
            return NotImplemented
        # Go Add: a zero receiver adopts the operand's format.
        fmt = other.format if self.is_zero() else self.format
        return Quantity(_EXACT.add(self.amount, other.amount), fmt)

    def __sub__(self, other: Quantity) -> Quantity:
        if not isinstance(other, Quantity):
            return NotImplemented
        fmt = other.format if self.is_zero() else self.format
        return Quantity(_EXACT.subtract(self.amount, other.amount), fmt)

    def __neg__(self) -> Quantity:
        return Quantity(_EXACT.minus(self.amount), self.format)

    def __mul__(self, n: int) -> Quantity:
        if isinstance(n, bool) or not isinstance(n, int):
            return NotImplemented
        return Quantity(_EXACT.multiply(self.amount, Decimal(n)), self.format)

    __rmul__ = __mul__

    # --- comparison (Go Cmp: by value only, format and cached text are ignored) ------------------
    def cmp(self, other: Quantity) -> int:
        return int(_EXACT.compare(self.amount, other.amount))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self.cmp(other) == 0

    def __lt__(self, other: Quantity) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self.cmp(other) < 0

    def __le__(self, other: Quantity) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self.cmp(other) <= 0

    def __gt__(self, other: Quantity) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self.cmp(other) > 0

    def __ge__(self, other: Quantity) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self.cmp(other) >= 0

    def __hash__(self) -> int:
        return hash(self.amount)  # Decimal hashes by value, consistent with __eq__

    # --- accessors ------------------------------------------------------------------------------
    def is_zero(self) -> bool:
        return self.amount.is_zero()

    def sign(self) -> int:
        return 0 if self.amount.is_zero() else (-1 if self.amount.is_signed() else 1)

    def ceil_int(self) -> int:
        """Go ``Value()``: the value rounded to an integer away from zero (2500m -> 3). An int64
        in Go: a value beyond it (`cpu: 1e999999`, a million digits) is held at the int64 bound
        rather than converted, which would take minutes."""
        return _saturated(self.amount) or int(self.amount.to_integral_value(rounding=ROUND_UP, context=_EXACT))

    def milli_value(self) -> int:
        """Go ``MilliValue()``: value × 1000, rounded away from zero (held at the int64 bounds)."""
        milli = self.amount.scaleb(3, _EXACT)
        return _saturated(milli) or int(milli.to_integral_value(rounding=ROUND_UP, context=_EXACT))

    # --- printing -------------------------------------------------------------------------------
    def canonical(self) -> str:
        """Exactly what Go's ``String()`` (and ``MarshalJSON``) prints."""
        if self.cached is not None:
            return self.cached
        if self.is_zero():
            return "0"
        fmt = self.format
        if fmt == BINARY_SI:
            if -1024 < self.amount < 1024:
                fmt = DECIMAL_SI  # small binary values print as decimal, without rounding
            elif self.amount != self.amount.to_integral_value(rounding=ROUND_UP, context=_EXACT):
                fmt = DECIMAL_SI  # fractional: BinarySI would lose precision
        if fmt == BINARY_SI:
            return _binary_text(int(self.amount))
        return _decimal_text(self.amount, fmt)

    def __str__(self) -> str:
        return self.canonical()

    def __repr__(self) -> str:
        return f"Quantity({self.canonical()!r}, {self.format})"


ZERO = Quantity()


def _saturated(amount: Decimal) -> int:
    """The int64 bound `amount` lies beyond, or 0 when it is within int64."""
    # below 10^19 (adjusted exponent < 19) an exact comparison is cheap
    if (amount.is_zero() or amount.adjusted() < 19) and -_MAX_INT64 - 1 <= amount <= _MAX_INT64:
        return 0
    return -_MAX_INT64 - 1 if amount.is_signed() else _MAX_INT64


# --- printing helpers -------------------------------------------------------------------------------
def _decimal_text(amount: Decimal, fmt: str) -> str:
    """AsCanonicalBytes + the decimal suffix: mantissa × 10^e with e a multiple of 3, as large
    as keeps the mantissa whole."""
    sign, digits, exp = amount.normalize(_EXACT).as_tuple()
    assert isinstance(exp, int)
    exp3 = exp - exp % 3  # floor to a multiple of three
    mantissa = "".join(map(str, digits)) + "0" * (exp - exp3)
    number = ("-" if sign else "") + mantissa
    if fmt == DECIMAL_EXPONENT:
        return number if exp3 == 0 else f"{number}e{exp3}"
    suffix = _DECIMAL_SUFFIX_BY_EXP.get(exp3)
    # DecimalSI has no suffix beyond "E": apimachinery falls back to exponent notation.
    return number + (suffix if suffix is not None else f"e{exp3}")


def _binary_text(value: int) -> str:
    """AsCanonicalBase1024Bytes + the binary suffix. Above Ei there is no suffix, and Go then
    prints the reduced mantissa alone (its behaviour, kept as is)."""
    power = 0
    while abs(value) >= 1024 and value % 1024 == 0:
        value //= 1024
        power += 1
    return f"{value}{_BINARY_SUFFIX_BY_POWER.get(power, '')}"


# --- parsing ----------------------------------------------------------------------------------------
@struct(frozen=True, slots=True)
class _Scanned:
    positive: bool
    value: str  # the numeric text including sign, as Go hands it to inf.Dec.SetString
    num: str  # integer digits without leading zeros ("0" when none)
    denom: str  # fraction digits
    suffix: str


def _scan(text: str) -> _Scanned:
    """parseQuantityString: split sign, number and suffix the way Go's scanner does."""
    positive = True
    pos = 0
    end = len(text)
    if pos < end and text[0] in "+-":
        positive = text[0] == "+"
        pos += 1
    # strip leading zeros; a number made only of zeros ends the scan here
    while True:
        if pos >= end:
            return _Scanned(positive, "0", "0", "", "")
        if text[pos] != "0":
            break
        pos += 1
    start = pos
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    if pos >= end:
        return _Scanned(positive, text, text[start:], "", "")
    num = text[start:pos] or "0"
    denom = ""
    if text[pos] == ".":
        pos += 1
        start = pos
        while pos < end and text[pos] in _DIGITS:
            pos += 1
        denom = text[start:pos]
        if pos >= end:
            return _Scanned(positive, text, num, denom, "")
    value = text[:pos]
    suffix_start = pos
    while pos < end and text[pos] in _SUFFIX_CHARS:
        pos += 1
    if pos < end and text[pos] in "+-":
        pos += 1
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    if pos < end:
        raise QuantityError(text, ERR_FORMAT_WRONG)
    return _Scanned(positive, value, num, denom, text[suffix_start:])


def _wrap_int32(n: int) -> int:
    return (n + 2**31) % 2**32 - 2**31


def _is_exponent(text: str) -> bool:
    """`[+-]?[0-9]+`, the whole of `text`."""
    digits = text[1:] if text[:1] in ("+", "-") else text
    return digits.isascii() and digits.isdigit()


def _interpret(text: str, suffix: str) -> tuple[int, int, str]:
    """suffixer.interpret: (base, exponent, format)."""
    if suffix in _DECIMAL_SUFFIXES:
        return 10, _DECIMAL_SUFFIXES[suffix], DECIMAL_SI
    if suffix in _BINARY_SUFFIXES:
        return 2, _BINARY_SUFFIXES[suffix], BINARY_SI
    if len(suffix) > 1 and suffix[0] in "eE" and _is_exponent(suffix[1:]):
        parsed = int(suffix[1:])
        if -(2**63) <= parsed <= _MAX_INT64:  # strconv.ParseInt(.., 10, 64)
            return 10, _wrap_int32(parsed), DECIMAL_EXPONENT  # Go narrows it with int32(...)
    raise QuantityError(text, ERR_SUFFIX)


def _parse_string(text: str) -> Quantity:
    if text == "":
        raise QuantityError(text, ERR_FORMAT_WRONG)
    if text == "0":
        return Quantity(Decimal(0), DECIMAL_SI, "0")
    scanned = _scan(text)
    base, exponent, fmt = _interpret(text, scanned.suffix)
    num, denom = scanned.num, scanned.denom

    # Fast path (int64Amount). Only here does Go keep the input text as the printed form.
    mantissa = 1
    if fmt == BINARY_SI:
        if not denom:
            mantissa = 1 << exponent
            # float32(exponent)*3/10 is exact for the binary exponents 10..60
            precision = 15 - len(num) - exponent * 3 // 10 - 1
        else:
            precision = -1
        scale = 0
    else:
        precision = _MAX_INT64_FACTORS - (len(num) + len(denom))
        scale = exponent
    if precision >= 0:
        scale = _wrap_int32(scale - len(denom))
        if scale >= _NANO_SCALE:
            shifted = num + denom
            unscaled = int(shifted)
            result = unscaled * mantissa
            if result <= _MAX_INT64:  # int64Multiply did not overflow
                if fmt == BINARY_SI:
                    canonical_text = exponent % 10 == 0 and unscaled & 0x07 != 0
                else:
                    canonical_text = scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0"
                amount = Decimal(result if scanned.positive else -result).scaleb(scale, _EXACT)
                return Quantity(amount, fmt, text if canonical_text else None)

    # Slow path (inf.Dec).
    if not any(ch in _DIGITS for ch in scanned.value):
        raise QuantityError(text, ERR_NUMERIC)
    amount = Decimal(scanned.value)
    amount = amount.scaleb(exponent, _EXACT) if base == 10 else _EXACT.multiply(amount, Decimal(1 << exponent))
    # Decimal's abs() and unary minus round to the context precision: use the copy_* forms.
    negative = amount.is_signed()
    amount = amount.copy_abs()
    exp = amount.as_tuple().exponent
    assert isinstance(exp, int)
    if not amount.is_zero() and exp < _NANO_SCALE:
        # "if you want some resources, you should get some": round up, away from zero
        amount = amount.quantize(_NANO, rounding=ROUND_UP, context=_EXACT)
    if fmt == BINARY_SI and amount > _MAX_ALLOWED:
        amount = _MAX_ALLOWED  # Go silently caps binary quantities at 2^63-1
    if fmt == BINARY_SI and 0 < amount < 1:
        fmt = DECIMAL_SI
    return Quantity(amount.copy_negate() if negative else amount, fmt)


def _json_number_text(value: object) -> str:
    """The text Go's encoding/json writes for a YAML number (sigs.k8s.io/yaml converts YAML
    to JSON before the API types parse it)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise QuantityError(value, "a quantity must be a string or a number")
    if isinstance(value, int):
        return str(int(value))
    number = float(value)
    if not math.isfinite(number):
        raise QuantityError(value, "a quantity must be a finite number")
    if number == 0:
        return "-0" if math.copysign(1.0, number) < 0 else "0"
    # repr gives the shortest round-trip digits, as Go's strconv does with precision -1
    sign, digit_tuple, exp = Decimal(float.__repr__(number)).as_tuple()
    assert isinstance(exp, int)
    digits = "".join(map(str, digit_tuple)).rstrip("0")
    exp += len(digit_tuple) - len(digits)
    prefix = "-" if sign else ""
    if abs(number) < 1e-6 or abs(number) >= 1e21:
        point_exp = exp + len(digits) - 1
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        # strconv writes two exponent digits at least; encoding/json turns e-07 into e-7
        exp_text = f"{'-' if point_exp < 0 else '+'}{abs(point_exp):02d}"
        if point_exp < 0 and abs(point_exp) < 10:
            exp_text = f"-{abs(point_exp)}"
        return f"{prefix}{mantissa}e{exp_text}"
    if exp >= 0:
        return prefix + digits + "0" * exp
    point = len(digits) + exp
    if point > 0:
        return f"{prefix}{digits[:point]}.{digits[point:]}"
    return f"{prefix}0.{'0' * -point}{digits}"


def matches_crd_pattern(text: str) -> bool:
    """Whether a quantity string passes the CRD schema pattern (what the API server checks)."""
    import re  # compiled (and cached by re) only when a quantity is validated

    return re.match(CRD_QUANTITY_PATTERN, text) is not None


# --- combining quantities ------------------------------------------------------------------------
def sum_quantities(quantities: Iterable[Quantity]) -> Quantity:
    """Σ as Go accumulates into a zero ``Quantity``: the result takes the format of the first
    non-zero term and is always printed canonically."""
    total = ZERO
    for q in quantities:
        total = total + q
    return total


def max_quantity(a: Quantity, b: Quantity) -> Quantity:
    """The larger of two quantities; on a tie the first one is kept, format included
    (component-helpers maxResourceList only replaces on ``Cmp > 0``)."""
    return b if b.cmp(a) > 0 else a


def add_resource_list(target: dict[str, Quantity], new: Mapping[str, Quantity]) -> None:
    """component-helpers addResourceList: the first value of a name is taken as is (Go deep
    copies it, keeping its printed form); later ones are added."""
    for name, q in new.items():
        target[name] = target[name] + q if name in target else q


def max_resource_list(target: dict[str, Quantity], new: Mapping[str, Quantity]) -> None:
    """component-helpers maxResourceList: per name, keep the larger, the existing on a tie."""
    for name, q in new.items():
        if name not in target or q.cmp(target[name]) > 0:
            target[name] = q


def _resource_list(raw: object) -> dict[str, Quantity]:
    if not isinstance(raw, Mapping):
        return {}
    return {str(name): Quantity.from_json(value) for name, value in raw.items()}


def _requests_of(holder: object) -> dict[str, Quantity]:
    resources = holder.get("resources") if isinstance(holder, Mapping) else None
    return _resource_list(resources.get("requests") if isinstance(resources, Mapping) else None)


def _containers(pod_spec: Mapping[str, Any], key: str) -> list[Mapping[str, Any]]:
    items = pod_spec.get(key)
    return [c for c in items if isinstance(c, Mapping)] if isinstance(items, list) else []


def is_supported_pod_level_resource(name: str) -> bool:
    """component-helpers IsSupportedPodLevelResource: cpu, memory and hugepages-*."""
    return name in ("cpu", "memory") or name.startswith("hugepages-")


def pod_requests(pod_spec: Mapping[str, Any]) -> dict[str, Quantity]:
    """component-helpers ``PodRequests(pod, PodResourcesOptions{})`` on a plain pod-spec mapping.

    Regular containers are summed; restartable init containers (``restartPolicy: Always``,
    sidecars) are added to that sum; every other init container needs its own requests plus
    the sidecars started before it, and the pod needs the per-resource max of the sum and
    those init peaks. Pod-level ``resources.requests`` then replace supported resources, and
    ``overhead`` is added. Only requests count, never limits.
    """
    result: dict[str, Quantity] = {}
    for container in _containers(pod_spec, "containers"):
        add_resource_list(result, _requests_of(container))

    sidecars: dict[str, Quantity] = {}
    init_peak: dict[str, Quantity] = {}
    for container in _containers(pod_spec, "initContainers"):
        requests = _requests_of(container)
        if container.get("restartPolicy") == "Always":
            add_resource_list(result, requests)
            add_resource_list(sidecars, requests)
            needed = sidecars
        else:
            needed = {}
            add_resource_list(needed, requests)  # its own requests first: they set the format
            add_resource_list(needed, sidecars)
        max_resource_list(init_peak, needed)
    max_resource_list(result, init_peak)

    pod_level = _requests_of(pod_spec)
    if any(is_supported_pod_level_resource(name) for name in pod_level):
        for name, q in pod_level.items():
            if is_supported_pod_level_resource(name):
                result[name] = q

    add_resource_list(result, _resource_list(pod_spec.get("overhead")))
    return result
