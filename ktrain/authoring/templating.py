"""Job files as jinja2 templates: `job.yaml.j2` (or any job file with `{{` / `{%`).

The template runs in jinja2's immutable sandbox with `StrictUndefined`: it sees only the
values given with `--values FILE` and `--set NAME=VALUE` (no files, no environment), and a
variable it uses without a value is an error naming the variable and the template line.

jinja2 is imported only when a template is actually rendered (the plain render path stays light).
"""

from __future__ import annotations

import difflib
import re
from typing import Any

from ktrain.errors import InputError
from ktrain.inputs.documents import Document, load_documents

TEMPLATE_SUFFIX = ".j2"
_TEMPLATE_FILENAME = "<template>"  # the code filename jinja2 gives a template made from a string
_UNDEFINED = re.compile(r"^'([^']+)' is undefined$")
_NO_ATTRIBUTE = re.compile(r"has no attribute '([^']+)'$")


# The first line of a file that holds `{{` or `{%` as text, not as a template (what `job convert`
# writes when a v1 job's own values hold them: kubectl applies that file as it is, so escaping
# them would change what kubectl applies).
NOT_A_TEMPLATE = "# ktrain: not a template"


def is_template(path: str | None, text: str) -> bool:
    """A `.j2` file, or one that uses `{{` / `{%`, unless its first line is NOT_A_TEMPLATE."""
    if path and path.endswith(TEMPLATE_SUFFIX):
        return True
    return ("{{" in text or "{%" in text) and not text.lstrip("\ufeff").startswith(NOT_A_TEMPLATE)


def marked_plain(text: str) -> str:
    """YAML text that ktrain reads as written, not as a template: `text`, with the NOT_A_TEMPLATE
    line first where it holds `{{` or `{%` (a YAML comment: kubectl reads the same objects)."""
    if "{{" in text or "{%" in text:
        return f"{NOT_A_TEMPLATE} (its {{{{ and {{% are text)\n{text}"
    return text


_FLOAT_TEXT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9][0-9_]*(?:\.[0-9_]*)?)(?:[eE][-+]?[0-9]+)?")


class SourceFloat(float):
    """A float from a values file that prints as written: `lr: 1e-3` renders `1e-3`, not
    `0.001`, while `{% if lr < 0.01 %}` still compares numbers."""

    text: str

    def __new__(cls, value: float, text: str) -> SourceFloat:
        obj = super().__new__(cls, value)
        obj.text = text
        return obj

    def __str__(self) -> str:
        return self.text


def _keep_float_text(node: Any, path: tuple[Any, ...], doc: Document) -> Any:
    if isinstance(node, dict):
        return {k: _keep_float_text(v, (*path, k), doc) for k, v in node.items()}
    if isinstance(node, list):
        return [_keep_float_text(v, (*path, i), doc) for i, v in enumerate(node)]
    if isinstance(node, float) and path in doc.positions:
        line, col = doc.positions[path]
        source = doc.source_line(line) or ""
        found = _FLOAT_TEXT.match(source, col - 1)
        if found and float(found.group(0).replace("_", "")) == node:
            return SourceFloat(node, found.group(0))
    return node


def _deep_merge(into: dict[str, Any], other: dict[str, Any]) -> None:
    for key, value in other.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _deep_merge(into[key], value)
        else:
            into[key] = value


def load_values(files: list[tuple[str, str]]) -> dict[str, Any]:
    """Merge values files (name, text) in order; later files win, mappings merge deeply."""
    from ktrain.api.values import VALUE_NAME_PATTERN

    values: dict[str, Any] = {}
    for file, text in files:
        docs = load_documents(text, file)
        if not docs:
            continue
        if len(docs) > 1:
            raise docs[1].error("a values file holds one YAML document")
        doc = docs[0]
        if not isinstance(doc.data, dict):
            raise doc.error("a values file must be a mapping of names to values (e.g. `lr: 3e-4`)")
        for key in doc.data:
            if not re.match(VALUE_NAME_PATTERN, key):
                suggestion = re.sub(r"\W", "_", key)
                if suggestion[:1].isdigit():
                    suggestion = "_" + suggestion
                raise doc.error(
                    f"{key!r} is not a template variable name (letters, digits and _, not starting with a digit)",
                    (key,),
                    key=True,
                    hint=f"rename it, e.g. {suggestion!r}",
                )
        _deep_merge(values, _keep_float_text(doc.data, (), doc))
    return values


def _template_line(exc: BaseException) -> int | None:
    """The template line jinja2 was at when `exc` was raised (from its rewritten traceback)."""
    line = None
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == _TEMPLATE_FILENAME:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def _located(
    message: str, file: str, lines: list[str], line: int | None, *, hint: str | None = None, needle: str | None = None
) -> InputError:
    source = lines[line - 1] if line is not None and 0 < line <= len(lines) else None
    column = None
    if source is not None:
        column = 1
        if needle:
            found = re.search(r"\b" + re.escape(needle) + r"\b", source)
            if found:
                column = found.start() + 1
    return InputError(message, file=file, line=line, column=column, source_line=source, hint=hint)


def render_template(text: str, file: str, values: dict[str, Any]) -> str:
    """The template's output text; every jinja2 problem becomes an InputError at file:line."""
    import jinja2
    from jinja2.exceptions import SecurityError

    from ktrain.authoring import template_bounds as bounds

    lines = text.splitlines()
    budget = bounds.Budget(bounds.TIME_BUDGET)
    env = bounds.BoundedEnvironment(
        budget, undefined=jinja2.StrictUndefined, keep_trailing_newline=True, autoescape=False
    )
    try:
        template = bounds.compile_bounded(env, text)
    except jinja2.TemplateSyntaxError as exc:
        raise _located(f"template syntax error: {exc.message}", file, lines, exc.lineno) from None
    except bounds.TemplateLimit as exc:
        raise _located(f"template error: {exc.message}", file, lines, None) from None
    try:
        return bounds.render_bounded(template, values, budget, _template_line)
    except bounds.TemplateLimit as exc:
        raise _located(
            f"template error: {exc.message}",
            file,
            lines,
            exc.line or _template_line(exc),
            hint="a job template renders a few KiB in milliseconds: "
            "look for a loop, a macro or a repetition that runs away",
        ) from None
    except jinja2.UndefinedError as exc:
        line = _template_line(exc)
        message = exc.message or "undefined value"
        undefined = _UNDEFINED.match(message)
        if undefined:
            name = undefined.group(1)
            close = difflib.get_close_matches(name, list(values), n=1)
            hint = (
                f"did you mean {close[0]!r}? " if close else ""
            ) + f"pass it with --set {name}=VALUE or in a --values file"
            raise _located(f"undefined template variable {name!r}", file, lines, line, hint=hint, needle=name) from None
        attribute = _NO_ATTRIBUTE.search(message)
        raise _located(
            f"template error: {message}",
            file,
            lines,
            line,
            needle=attribute.group(1) if attribute else None,
            hint="check the values given with --values / --set",
        ) from None
    except SecurityError as exc:
        raise _located(
            f"template error: {exc} (templates run in a sandbox)", file, lines, _template_line(exc)
        ) from None
    except TypeError as exc:
        if "no loader" in str(exc):
            raise _located(
                "templates cannot include or import other files (sandbox); pass data with --values instead",
                file,
                lines,
                _template_line(exc),
            ) from None
        raise _located(f"template error: {exc}", file, lines, _template_line(exc)) from None
    except jinja2.TemplateError as exc:
        raise _located(f"template error: {exc}", file, lines, _template_line(exc)) from None
    except (ArithmeticError, ValueError, LookupError) as exc:
        raise _located(f"template error: {type(exc).__name__}: {exc}", file, lines, _template_line(exc)) from None


def unused_values(text: str, file: str, names: list[str]) -> list[str]:
    """Warnings for the `--set NAME=...` template values no variable of the template reads
    (they would be ignored silently), each with the closest variable name."""
    import jinja2
    from jinja2 import meta
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    env = ImmutableSandboxedEnvironment(undefined=jinja2.StrictUndefined, autoescape=False)
    try:
        variables = meta.find_undeclared_variables(env.parse(text))
    except jinja2.TemplateError:
        return []  # render_template reports it
    out = []
    for name in dict.fromkeys(names):
        if name in variables:
            continue
        close = difflib.get_close_matches(name, sorted(variables), n=1)
        out.append(
            f"--set {name}: {file} uses no template variable {name!r}, the value is ignored"
            + (f" (did you mean {close[0]!r}?)" if close else "")
        )
    return out


def rendered_label(file: str, template_text: str, rendered: str) -> str:
    """The file name errors in the rendered YAML use. When the template kept the line count,
    lines match the template's; otherwise the numbers refer to the rendered text."""
    if len(template_text.splitlines()) == len(rendered.splitlines()):
        return file
    return f"{file} (rendered)"


__all__ = [
    "NOT_A_TEMPLATE",
    "Document",
    "is_template",
    "load_values",
    "marked_plain",
    "render_template",
    "rendered_label",
]
