"""Job templates render within budgets (issue #12, items 7 and 9): a runaway template is an
error at its file:line, exit 3, never a RecursionError, a MemoryError or a hang."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from ktrain.authoring import template_bounds as bounds
from ktrain.authoring.templating import render_template
from ktrain.errors import ExitCode, InputError

JOB = (
    "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata:\n  name: x\n"
    "spec:\n  runtimeRef:\n    name: torch-distributed\n"
)


def _error(text: str) -> InputError:
    with pytest.raises(InputError) as err:
        render_template(text, "job.yaml.j2", {"n": 3})
    return err.value


@pytest.fixture
def short_budget(monkeypatch: pytest.MonkeyPatch) -> float:
    monkeypatch.setattr(bounds, "TIME_BUDGET", 0.5)
    return 0.5


def test_recursive_macro_is_an_error_at_the_template_line(cli, tmp_path: Path) -> None:
    template = tmp_path / "job.yaml.j2"
    template.write_text(JOB + "{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}\n  x: {{ f(0) }}\n")
    r = cli("render", "-f", str(template))
    assert r.exit_code == ExitCode.INVALID, r.stderr
    assert f"{template}:" in r.stderr and "recurses too deeply" in r.stderr
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr


@pytest.mark.parametrize(
    "expression",
    [
        "'a' * 10**9",
        "[1] * 10**9",
        "3 ** (10**8)",
        "'a'|center(10**9)",
        "'a'.ljust(10**9)",
        "'%1000000000d' % 1",
        "'{:>1000000000}'.format(1)",
        "'%*d'|format(10**9, 1)",
        "('a' * 1000000)|replace('a', 'b' * 100)",
        "[1]|batch(10**9, 'x')|list",
        "lipsum(n=100000)",
    ],
)
def test_huge_template_value_is_refused_before_it_is_built(expression: str) -> None:
    started = time.monotonic()
    err = _error(f"kind: TrainJob\nx: {{{{ {expression} }}}}\n")
    assert time.monotonic() - started < 2
    assert err.line == 2 and ("larger than 16 MiB" in err.message or "bits" in err.message), err.message


def test_text_doubling_with_concat_is_refused() -> None:
    doubling = "".join("{% set a = a ~ a %}" for _ in range(40))
    err = _error("{% set a = 'aaaaaaaaaaaaaaaa' %}" + doubling + "{{ a|length }}")
    assert "larger than 16 MiB" in err.message
    err = _error("{% set ns = namespace(s='a') %}{% for i in range(60) %}{% set ns.s = ns.s + ns.s %}{% endfor %}")
    assert "larger than 16 MiB" in err.message


def test_huge_output_is_refused() -> None:
    s = "{% set s = 'x' * 10000000 %}"
    assert "larger than 16 MiB" in _error(s + "{{ [s, s, s] }}").message
    assert "output is larger than 16 MiB" in _error(s + "{% for i in range(3) %}{{ s }}{% endfor %}").message


def test_total_work_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bounds, "MAX_WORK", 50 * 1024 * 1024)
    err = _error("{% for i in range(100) %}{% set s = 'x' * 1000000 %}{% endfor %}")
    assert "more than 50 MiB of text" in err.message


@pytest.mark.parametrize(
    "body",
    [
        "{% for i in range(100000) %}{% for j in range(100000) %}x{% endfor %}{% endfor %}",
        "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
        "{% set l = [1] * 100000 %}{% for a in l %}{% for b in l %}{% endfor %}{% endfor %}",
    ],
    ids=["output", "empty", "no-calls"],
)
def test_long_running_template_stops_at_the_time_budget(short_budget: float, body: str) -> None:
    started = time.monotonic()
    err = _error(body)
    assert time.monotonic() - started < short_budget + 2
    assert "took longer than 0.5 s" in err.message


def test_time_budget_outside_the_main_thread(short_budget: float) -> None:
    """No timer signal there: the checks at each call, attribute and output chunk still stop it."""
    found: list[BaseException] = []

    def run() -> None:
        try:
            render_template("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}", "t", {})
        except BaseException as exc:  # noqa: BLE001
            found.append(exc)

    worker = threading.Thread(target=run)
    worker.start()
    worker.join(10)
    assert not worker.is_alive()
    assert isinstance(found[0], InputError) and "took longer" in found[0].message


def test_the_budgets_leave_ordinary_templates_alone() -> None:
    text = (
        "kind: TrainJob\nname: {{ 'x' * 3 }}-{{ n }}\n{% for i in range(3) %}- {{ i }}\n{% endfor %}"
        "{{ '%05d' % 3 }} {{ 'a'|center(9) }} {{ [1, 2]|join(',') }} {{ '{:>4}'.format(n) }} {{ 2 ** 10 }}"
        "{% set ns = namespace(s='a') %}{% set ns.s = ns.s ~ 'b' %}{{ ns.s }} {{ 'a b'|replace(' ', '-') }}"
        "{{ 'x'|indent(4) }}{{ lipsum(1)|length > 0 }}"
    )
    out = render_template(text, "t", {"n": 3})
    assert out.startswith("kind: TrainJob\nname: xxx-3\n- 0\n- 1\n- 2\n00003     a     1,2    3 1024ab a-bxTrue")
    import signal

    assert signal.getitimer(signal.ITIMER_REAL)[0] == 0  # the timer is off again


def test_huge_template_compile_stops_at_the_time_budget(short_budget: float) -> None:
    import gc

    # Late in a long run this worker's heap holds millions of objects: a full collection during the
    # compile would walk them all before the alarm's handler runs, which is not what is measured here.
    gc.collect()
    gc.disable()
    try:
        started = time.monotonic()
        err = _error("{{ n }}\n" * 40_000)
        elapsed = time.monotonic() - started
    finally:
        gc.enable()
    assert elapsed < short_budget + 3
    assert "took longer than 0.5 s" in err.message


def test_deeply_nested_template_expression_is_an_error() -> None:
    assert "nested too deeply" in _error("{{ " + "(" * 5000 + "1" + ")" * 5000 + " }}").message
