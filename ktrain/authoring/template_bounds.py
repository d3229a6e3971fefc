"""Budgets for rendering a job template: output size, work, time and recursion.

A job template renders a few KiB in milliseconds. One that does not (`{{ 'a' * 10**9 }}`,
nested `range(100000)` loops, a macro calling itself) is stopped with a clear error instead of
taking the machine's memory or time:

- every value the template builds that can grow (`*`, `+`, `%`, `**`, `~`, the filters and
  string methods that take a width or repeat text) is checked *before* it is built: at most
  `MAX_TEXT` characters (16 MiB, the size of the largest input file ktrain reads) or items;
- the text those operations build is counted: at most `MAX_WORK` (256 MiB) over one render;
- the output is streamed and counted: at most `MAX_TEXT` characters;
- the render has `TIME_BUDGET` seconds (10 s), checked at every call, attribute, operator
  and output chunk the template makes, and, in the main thread on Unix, by a timer signal
  (so a loop that makes none of those is stopped too);
- a recursion that exhausts Python's stack is an error, as is running out of memory.

This module imports jinja2: it is loaded only when a template is rendered.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from typing import Any

from jinja2.compiler import CodeGenerator
from jinja2.sandbox import ImmutableSandboxedEnvironment
from jinja2.utils import Namespace

from ktrain.inputs.reading import MAX_INPUT_BYTES

MAX_TEXT = MAX_INPUT_BYTES  # characters of one value, or of the output; items of one list
MAX_WORK = 256 * 1024 * 1024  # characters built by the growing operations in one render
TIME_BUDGET = 10.0  # seconds
MAX_INT_BITS = 100_000  # `**` and `*` on integers (a 30,000-digit number)
_MIB = 1024 * 1024
_NUMBER = re.compile(r"[0-9]+")


class TemplateLimit(Exception):
    """A template went over one of its budgets (becomes an InputError at its line)."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line  # the template line, when not found from the traceback


def _size(value: Any, limit: int) -> int:
    """The length of the text `str(value)` would make (an estimate for containers, exact for
    strings), stopping early once past `limit`."""
    if isinstance(value, str):
        return len(value)
    if isinstance(value, (list, tuple, set, frozenset, dict)):
        total = 2
        for item in value.items() if isinstance(value, dict) else value:
            total += _size(item, limit - total) + 2
            if total > limit:
                return total
        return total
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > MAX_INT_BITS:
        return limit + 1
    return 8


class Budget:
    def __init__(self, seconds: float) -> None:
        self.deadline = time.monotonic() + seconds
        self.seconds = seconds
        self.work = 0

    def tick(self) -> None:
        if time.monotonic() > self.deadline:
            raise TemplateLimit(f"the template took longer than {self.seconds:g} s to render")

    def allow(self, size: int, what: str) -> None:
        """A value of `size` characters (or items) is about to be built."""
        if size > MAX_TEXT:
            raise TemplateLimit(f"{what} would be larger than {MAX_TEXT // _MIB} MiB (the template size limit)")
        if size > 256:
            self.work += size
            if self.work > MAX_WORK:
                raise TemplateLimit(
                    f"the template builds more than {MAX_WORK // _MIB} MiB of text (the template work limit)"
                )
        self.tick()


def _format_widths(fmt: str, args: Any, budget: Budget, what: str) -> None:
    """`'%1000000000d' % 1`, `'{:>1000000000}'.format(x)`: a width or precision in a format
    string builds that many characters."""
    for number in _NUMBER.findall(fmt):
        if len(number) > 8 or int(number) > MAX_TEXT:
            budget.allow(MAX_TEXT + 1, what)
    if "*" in fmt:  # '%*d' takes the width from the arguments
        for arg in args if isinstance(args, (tuple, list)) else (args,):
            if isinstance(arg, int) and abs(arg) > MAX_TEXT:
                budget.allow(MAX_TEXT + 1, what)
    budget.allow(len(fmt) + _size(args, MAX_TEXT), what)


def _sequence_len(value: Any) -> int | None:
    return len(value) if isinstance(value, (str, list, tuple)) else None


# Filters whose result can be much larger than their input, and what to check before running them.
def _check_filter(name: str, budget: Budget, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    value = args[0] if args else None
    what = f"the result of |{name}"
    if name in ("center", "indent", "wordwrap", "batch", "slice", "truncate"):
        widths = [a for a in (*args[1:], *kwargs.values()) if isinstance(a, int) and not isinstance(a, bool)]
        widths += [len(a) for a in (*args[1:], *kwargs.values()) if isinstance(a, str)]
        lines = value.count("\n") + 1 if isinstance(value, str) else 1
        budget.allow(_size(value, MAX_TEXT) + max(widths, default=0) * (lines if name == "indent" else 1), what)
    elif name == "format" and isinstance(value, str):
        _format_widths(value, (*args[1:], *kwargs.values()), budget, what)
    elif name == "replace" and isinstance(value, str) and len(args) >= 3:
        old, new = str(args[1]), str(args[2])
        count = value.count(old) if old else len(value) + 1
        budget.allow(len(value) + count * max(0, len(new) - len(old)), what)
    elif name in ("join", "string", "tojson", "pprint", "list", "urlencode", "xmlattr", "sum"):
        budget.allow(_size(value, MAX_TEXT) * (1 + (len(str(args[1])) if len(args) > 1 else 0)), what)


_STR_WIDTH_METHODS = {"center", "ljust", "rjust", "zfill", "expandtabs"}


def _check_call(obj: Any, budget: Budget, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    owner = getattr(obj, "__self__", None)
    name = getattr(obj, "__name__", "")
    if isinstance(owner, str):
        what = f"the result of .{name}()"
        if name in _STR_WIDTH_METHODS:
            width = next(iter((*args, *kwargs.values())), 8)
            if isinstance(width, int):
                tabs = owner.count("\t") if name == "expandtabs" else 1
                budget.allow(len(owner) + max(0, width) * tabs, what)
        elif name == "join" and args:
            budget.allow(_size(args[0], MAX_TEXT) * (1 + len(owner)), what)
        elif name == "replace" and len(args) >= 2:
            old, new = str(args[0]), str(args[1])
            count = owner.count(old) if old else len(owner) + 1
            budget.allow(len(owner) + count * max(0, len(new) - len(old)), what)
        elif name in ("format", "format_map"):
            _format_widths(owner, (*args, *kwargs.values()), budget, what)


def _binop_size(operator: str, left: Any, right: Any, budget: Budget) -> None:
    what = f"the result of {operator!r}"
    if operator == "*":
        for seq, times in ((left, right), (right, left)):
            n = _sequence_len(seq)
            if n is not None and isinstance(times, int):
                budget.allow(n * max(0, times), what)
        if isinstance(left, int) and isinstance(right, int) and left.bit_length() + right.bit_length() > MAX_INT_BITS:
            raise TemplateLimit(f"{what} would be a number of more than {MAX_INT_BITS} bits")
    elif operator == "**":
        if (
            isinstance(left, int)
            and isinstance(right, int)
            and right > 0
            and abs(left) > 1
            and (right > MAX_INT_BITS or left.bit_length() * right > MAX_INT_BITS)
        ):
            raise TemplateLimit(f"{what} would be a number of more than {MAX_INT_BITS} bits")
    elif operator == "+":
        a, b = _sequence_len(left), _sequence_len(right)
        if a is not None and b is not None:
            budget.allow(a + b, what)
    elif operator == "%" and isinstance(left, str):
        _format_widths(left, right, budget, what)


class _Generator(CodeGenerator):
    def visit_Concat(self, node: Any, frame: Any) -> None:  # `a ~ b`: checked like `+`
        self.write("environment.ktrain_concat(")
        super().visit_Concat(node, frame)
        self.write(")")


class BoundedNamespace(Namespace):
    """`namespace()`: `{% set ns.s = ns.s ~ ns.s %}` in a loop builds text like `~` does."""


def _bounded_lipsum(budget: Budget, real: Any) -> Any:
    def lipsum(n: int = 5, html: bool = True, min: int = 20, max: int = 100) -> Any:  # noqa: A002
        try:
            words = int(n) * int(max)
        except (TypeError, ValueError):
            words = 0
        budget.allow(words * 12, "the result of lipsum()")
        return real(n=n, html=html, min=min, max=max)

    return lipsum


class BoundedEnvironment(ImmutableSandboxedEnvironment):
    code_generator_class = _Generator
    intercepted_binops = frozenset({"*", "**", "+", "%"})

    def __init__(self, budget: Budget, **options: Any) -> None:
        super().__init__(**options)
        self.ktrain_budget = budget
        self.globals["namespace"] = BoundedNamespace
        self.globals["lipsum"] = _bounded_lipsum(budget, self.globals["lipsum"])
        self.finalize = self._finalize
        for name, function in list(self.filters.items()):
            self.filters[name] = self._bounded_filter(name, function)

    def _bounded_filter(self, name: str, function: Any) -> Any:
        budget = self.ktrain_budget

        skip = 1 if hasattr(function, "jinja_pass_arg") else 0  # the context/environment comes first

        def bounded(*args: Any, **kwargs: Any) -> Any:
            _check_filter(name, budget, args[skip:], kwargs)
            return function(*args, **kwargs)

        for attr in ("jinja_pass_arg",):  # keep @pass_context / @pass_environment
            if hasattr(function, attr):
                setattr(bounded, attr, getattr(function, attr))
        return bounded

    def _finalize(self, value: Any) -> Any:
        if not isinstance(value, str):
            self.ktrain_budget.allow(_size(value, MAX_TEXT), "an output value")
        return value

    def ktrain_concat(self, value: Any) -> Any:
        if isinstance(value, str):
            self.ktrain_budget.allow(len(value), "the result of '~'")
        return value

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        _binop_size(operator, left, right, self.ktrain_budget)
        return super().call_binop(context, operator, left, right)

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805
        budget = __self.ktrain_budget
        budget.tick()
        _check_call(__obj, budget, args, kwargs)
        if isinstance(__obj, type) and issubclass(__obj, Namespace) and args:
            budget.allow(_size(args, MAX_TEXT), "a namespace")
        return super().call(__context, __obj, *args, **kwargs)

    def getattr(self, obj: Any, attribute: str) -> Any:
        self.ktrain_budget.tick()
        return super().getattr(obj, attribute)

    def getitem(self, obj: Any, argument: Any) -> Any:
        self.ktrain_budget.tick()
        return super().getitem(obj, argument)

    def wrap_str_format(self, value: Any) -> Any:
        wrapped = super().wrap_str_format(value)
        if wrapped is None:
            return None
        fmt, budget = value.__self__, self.ktrain_budget

        def checked(*args: Any, **kwargs: Any) -> Any:
            _format_widths(fmt, (*args, *kwargs.values()), budget, f"the result of .{value.__name__}()")
            return wrapped(*args, **kwargs)

        return checked


def _namespace_setitem(self: Any, name: str, value: Any) -> None:
    budget = _ACTIVE.budget
    if budget is not None:
        budget.allow(_size(value, MAX_TEXT), f"namespace value {name!r}")
    Namespace.__setitem__(self, name, value)


BoundedNamespace.__setitem__ = _namespace_setitem  # type: ignore[method-assign]


class _Active(threading.local):
    budget: Budget | None = None


_ACTIVE = _Active()


def compile_bounded(env: BoundedEnvironment, text: str) -> Any:
    """The compiled template, within the time budget (a huge template compiles slowly)."""
    try:
        with _alarm(env.ktrain_budget):
            return env.from_string(text)
    except RecursionError:  # an expression nested thousands of levels deep
        raise TemplateLimit("the template is nested too deeply") from None


def render_bounded(template: Any, values: dict[str, Any], budget: Budget, line_of: Any = None) -> str:
    """The template's output, within the budgets (TemplateLimit when over one); `line_of(exc)`
    finds the template line of an exception from its traceback."""
    _ACTIVE.budget = budget
    try:
        with _alarm(budget) as alarm:
            out: list[str] = []
            total = 0
            chunks: Iterator[str] = template.generate(**values)
            for chunk in chunks:
                total += len(chunk)
                if total > MAX_TEXT:
                    raise TemplateLimit(f"the template's output is larger than {MAX_TEXT // _MIB} MiB")
                if not alarm.armed:
                    budget.tick()
                out.append(chunk)
            return "".join(out)
    except RecursionError as exc:
        raise TemplateLimit(
            "the template recurses too deeply (a macro that calls itself without end?)",
            line_of(exc) if line_of else None,
        ) from None
    except MemoryError as exc:
        raise TemplateLimit("the template ran out of memory", line_of(exc) if line_of else None) from None
    finally:
        _ACTIVE.budget = None


class _alarm:  # noqa: N801 - a context manager
    """SIGALRM after the time budget, in the main thread on Unix (elsewhere: the checks only)."""

    def __init__(self, budget: Budget) -> None:
        self.budget = budget
        self.armed = False
        self.installed = False
        self.previous: Any = None

    def __enter__(self) -> _alarm:
        import signal

        if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
            return self
        if signal.getitimer(signal.ITIMER_REAL)[0]:  # someone else's timer runs: leave it alone
            return self

        def expired(signum: int, frame: Any) -> None:
            if self.armed:
                self.armed = False
                raise TemplateLimit(f"the template took longer than {self.budget.seconds:g} s to render")

        self.previous = signal.signal(signal.SIGALRM, expired)
        self.installed = self.armed = True
        signal.setitimer(signal.ITIMER_REAL, max(0.001, self.budget.deadline - time.monotonic()))
        return self

    def __exit__(self, *exc: Any) -> None:
        if not self.installed:
            return
        import signal

        self.armed = False
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, self.previous if self.previous is not None else signal.SIG_DFL)
