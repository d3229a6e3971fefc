"""Kubernetes resource quantities with exact arithmetic (k8s.io/apimachinery resource.Quantity).

Values are exact fractions rounded up to nano units as the API server does; the printed
form follows Go's CanonicalizeBytes, so sums such as PodGroup minResources come out as
upstream prints them (3 × "500m" -> "1500m", 2 × "1.5Gi" -> "3Gi").
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

DECIMAL_SI = "DecimalSI"
BINARY_SI = "BinarySI"
DECIMAL_EXPONENT = "DecimalExponent"

_NUMBER = re.compile(r"^([+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+))(.*)$")
_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_DECIMAL_SUFFIX = {v: k for k, v in _DECIMAL.items()}
_BINARY_SUFFIX = {v: k for k, v in _BINARY.items()}
_EXPONENT = re.compile(r"^[eE]([+-]?[0-9]+)$")
_NANO = Fraction(1, 10**9)


class QuantityError(ValueError):
    pass


def _ceil_to_nano(value: Fraction) -> Fraction:
    scaled = value / _NANO
    if scaled.denominator == 1:
        return value
    return Fraction(math.ceil(scaled)) * _NANO


@dataclass(frozen=True, slots=True)
class Quantity:
    value: Fraction
    format: str = DECIMAL_SI

    @classmethod
    def parse(cls, raw: Any) -> Quantity:
        if isinstance(raw, Quantity):
            return raw
        if isinstance(raw, bool):
            raise QuantityError(f"quantity must be a number or a string, not {raw!r}")
        if isinstance(raw, int):
            return cls(Fraction(raw), DECIMAL_SI)
        if isinstance(raw, float):
            raw = repr(raw)
        if not isinstance(raw, str):
            raise QuantityError(f"quantity must be a number or a string, not {raw!r}")
        text = raw.strip()
        match = _NUMBER.match(text)
        if not match or text != raw:
            raise QuantityError(f"{raw!r} is not a valid quantity")
        number, suffix = match.group(1), match.group(2)
        try:
            base = Fraction(number)
        except (ValueError, ZeroDivisionError):
            raise QuantityError(f"{raw!r} is not a valid quantity") from None
        if suffix in _BINARY:
            value, fmt = base * 2 ** _BINARY[suffix], BINARY_SI
        elif suffix in _DECIMAL:
            value, fmt = base * Fraction(10) ** _DECIMAL[suffix], DECIMAL_SI
        else:
            exp = _EXPONENT.match(suffix)
            if not exp:
                raise QuantityError(f"{raw!r} is not a valid quantity (unknown suffix {suffix!r})")
            value, fmt = base * Fraction(10) ** int(exp.group(1)), DECIMAL_EXPONENT
        return cls(_ceil_to_nano(value), fmt)

    # --- arithmetic (formats as Go: the left operand's, unless it is zero) ---------------------
    def __add__(self, other: Quantity) -> Quantity:
        fmt = other.format if self.value == 0 else self.format
        return Quantity(self.value + other.value, fmt)

    def __mul__(self, n: int) -> Quantity:
        return Quantity(self.value * n, self.format)

    __rmul__ = __mul__

    def __lt__(self, other: Quantity) -> bool:
        return self.value < other.value

    def __le__(self, other: Quantity) -> bool:
        return self.value <= other.value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Quantity) and self.value == other.value

    def __hash__(self) -> int:
        return hash(self.value)

    def is_zero(self) -> bool:
        return self.value == 0

    def ceil_int(self) -> int:
        """Go's Value(): the value rounded up to an integer."""
        return math.ceil(self.value)

    # --- printing -----------------------------------------------------------------------------
    def canonical(self) -> str:
        fmt = self.format
        if fmt == BINARY_SI and (-1024 < self.value < 1024 or self.value.denominator != 1):
            fmt = DECIMAL_SI  # small or fractional binary values print as decimal, without rounding
        if fmt == BINARY_SI:
            mantissa, exp = int(self.value), 0
            while mantissa != 0 and mantissa % 1024 == 0 and exp < 60:
                mantissa //= 1024
                exp += 10
            return f"{mantissa}{_BINARY_SUFFIX.get(exp, '')}" if exp in _BINARY_SUFFIX or exp == 0 else str(int(self.value))
        mantissa, exp = self._decimal_mantissa()
        if fmt == DECIMAL_EXPONENT:
            return f"{mantissa}e{exp}" if exp != 0 else str(mantissa)
        if exp in _DECIMAL_SUFFIX:
            return f"{mantissa}{_DECIMAL_SUFFIX[exp]}"
        return f"{mantissa}e{exp}"

    def _decimal_mantissa(self) -> tuple[int, int]:
        """value = mantissa × 10^exp with exp a multiple of 3, as large as keeps mantissa whole."""
        if self.value == 0:
            return 0, 0
        exp = -9
        mantissa = self.value * 10**9
        assert mantissa.denominator == 1
        m = int(mantissa)
        while m % 1000 == 0:
            m //= 1000
            exp += 3
        return m, exp

    def __str__(self) -> str:
        return self.canonical()


def max_quantity(a: Quantity, b: Quantity) -> Quantity:
    return b if b.value > a.value else a


def _add_into(total: dict[str, Quantity], requests: dict[str, Any] | None) -> None:
    for name, raw in (requests or {}).items():
        q = Quantity.parse(raw)
        total[name] = total[name] + q if name in total else q


def _max_into(total: dict[str, Quantity], other: dict[str, Quantity]) -> None:
    for name, q in other.items():
        total[name] = max_quantity(total[name], q) if name in total else q


def _requests(container: dict[str, Any]) -> dict[str, Any]:
    return dict(((container.get("resources") or {}).get("requests")) or {})


def pod_requests(pod_spec: dict[str, Any]) -> dict[str, Quantity]:
    """Resource requests of one pod by the Kubernetes rule (component-helpers PodRequests):
    sum of containers plus sidecars (restartable init containers); each regular init
    container needs its own requests plus the sidecars started before it, and the pod needs
    the element-wise max of both; then overhead. Limits never count."""
    pod_level = ((pod_spec.get("resources") or {}).get("requests")) or {}
    total: dict[str, Quantity] = {}
    for container in pod_spec.get("containers") or []:
        _add_into(total, _requests(container))
    sidecars: dict[str, Quantity] = {}
    init_peak: dict[str, Quantity] = {}
    for container in pod_spec.get("initContainers") or []:
        reqs = _requests(container)
        if container.get("restartPolicy") == "Always":
            _add_into(total, reqs)
            _add_into(sidecars, reqs)
            need = dict(sidecars)
        else:
            need = {}
            _add_into(need, reqs)  # the init container's own requests first, as upstream adds them
            for name, q in sidecars.items():
                need[name] = need[name] + q if name in need else q
        _max_into(init_peak, need)
    _max_into(total, init_peak)
    for name, raw in pod_level.items():
        if name in ("cpu", "memory", "hugepages") or name.startswith("hugepages-"):
            total[name] = Quantity.parse(raw)
    _add_into(total, pod_spec.get("overhead"))
    return total
