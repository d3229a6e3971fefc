"""Answer one completion request: walk the generated command tree, then ask a value provider.

Protocol (what the scripts in `completions/` do): the shell runs
`_KTRAIN_COMPLETE=<bash|zsh|fish|powershell> ktrain "<command line up to the cursor>"`.
The answer on stdout is a directive line (`:values`, `:nospace`, `:files` or `:dirs`), then one
candidate per line — `value<TAB>description` for zsh, fish and PowerShell, the bare value for
bash (trimmed after the last COMP_WORDBREAKS character of the current word, as bash expects).

Imports only the stdlib and this package: no typer, pydantic, ruamel or kubernetes. The types a
request and its answer are made of live in `ktrain.completion.request`, below both this module
and the value providers.
"""

from __future__ import annotations

import os
import sys

from ktrain.completion import providers
from ktrain.completion.request import ENV_VAR, Answer, Request, canonical_name, find_option

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    from typing import Any

SHELLS = ("bash", "zsh", "fish", "powershell")


def split_line(line: str) -> tuple[list[str], str]:
    """Shell words of `line`; the last one is the (possibly empty) word being completed.

    Quotes and backslashes are honoured; an unclosed quote just runs to the end of the line.
    """
    words: list[str] = []
    current: list[str] = []
    in_word = False
    quote = ""
    i = 0
    while i < len(line):
        ch = line[i]
        if quote == "'":
            if ch == "'":
                quote = ""
            else:
                current.append(ch)
        elif quote == '"':
            if ch == '"':
                quote = ""
            elif ch == "\\" and i + 1 < len(line) and line[i + 1] in '"\\$`':
                i += 1
                current.append(line[i])
            else:
                current.append(ch)
        elif ch in "'\"":
            quote = ch
            in_word = True
        elif ch == "\\" and i + 1 < len(line):
            i += 1
            current.append(line[i])
            in_word = True
        elif ch in " \t\n":
            if in_word:
                words.append("".join(current))
                current, in_word = [], False
        else:
            current.append(ch)
            in_word = True
        i += 1
    return words, "".join(current)


def locate(tree: dict[str, Any], words: list[str], incomplete: str) -> Request:
    """Follow `words` (program name excluded) through the tree, as click would parse them."""
    req = Request(node=tree["root"])
    i = 0
    while i < len(words):
        word = words[i]
        i += 1
        if req.after_dashdash:
            req.positional += 1
            continue
        if word == "--":
            req.after_dashdash = True
            continue
        if word.startswith("-") and word != "-":
            name, eq, value = word.partition("=") if word.startswith("--") else (word[:2], "", word[2:])
            opt = find_option(req.node, name)
            if opt is None or not opt["takes_value"]:
                continue
            if eq or value:
                req.given.setdefault(canonical_name(opt), []).append(value)
            elif i < len(words):
                req.given.setdefault(canonical_name(opt), []).append(words[i])
                i += 1
            else:  # the option's value is the word being completed
                req.option = opt
            continue
        sub = req.node.get("commands", {}).get(word)
        if sub is not None and req.positional == 0:
            req.path.append(word)
            req.node = sub
        else:
            req.positional += 1
    if req.option is None and not req.after_dashdash and incomplete.startswith("--") and "=" in incomplete:
        name, _, _ = incomplete.partition("=")
        opt = find_option(req.node, name)
        if opt is not None and opt["takes_value"]:
            req.option = opt
            req.option_prefix = name + "="
    return req


def answer(tree: dict[str, Any], line: str) -> Answer:
    words, incomplete = split_line(line)
    words = words[1:]  # the program name
    req = locate(tree, words, incomplete)
    if req.option is not None:
        value = incomplete[len(req.option_prefix) :]
        result = providers.option_values(req, value)
        result.items = [(req.option_prefix + v, d) for v, d in result.items if v.startswith(value)]
        return result
    if req.after_dashdash:
        return Answer(directive="files")
    if incomplete.startswith("-"):
        seen = set(req.given)
        items = []
        for opt in req.node.get("options", ()):
            if canonical_name(opt) in seen and not opt.get("multiple"):
                continue
            for name in opt["names"]:
                if name.startswith(incomplete) and (name.startswith("--") or incomplete in ("-", name)):
                    items.append((name, opt.get("help", "")))
        return Answer(items=items)
    commands = req.node.get("commands")
    if commands and req.positional == 0:
        return Answer(items=[(n, c.get("help", "")) for n, c in commands.items() if n.startswith(incomplete)])
    result = providers.argument_values(req, incomplete)
    result.items = [(v, d) for v, d in result.items if v.startswith(incomplete)]
    return result


def _bash_trim(value: str, incomplete: str, wordbreaks: str) -> str:
    """bash splits the current word at COMP_WORDBREAKS (`=`, `:`): drop what it already has."""
    cut = max((incomplete.rfind(ch) for ch in wordbreaks), default=-1)
    return value[cut + 1 :] if cut >= 0 else value


def render_answer(result: Answer, shell: str, incomplete: str) -> str:
    lines = [":" + result.directive]
    if result.directive in ("files", "dirs"):
        # The path typed so far (after `--opt=`), then that `--opt=` prefix, for the shell's own
        # file completion; bash has already split the word at its COMP_WORDBREAKS.
        option_prefix = incomplete.partition("=")[0] + "=" if incomplete.startswith("--") and "=" in incomplete else ""
        path = incomplete[len(option_prefix) :]
        if shell == "bash":
            return (
                "\n".join([*lines, _bash_trim(incomplete, incomplete, os.environ.get("COMP_WORDBREAKS", "=:"))]) + "\n"
            )
        return "\n".join([*lines, path, option_prefix]) + "\n"
    for value, description in result.items:
        if shell == "bash":
            lines.append(_bash_trim(value, incomplete, os.environ.get("COMP_WORDBREAKS", "=:")))
        else:
            description = description.replace("\t", " ").replace("\n", " ")
            lines.append(f"{value}\t{description}" if description else value)
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Entry point for `_KTRAIN_COMPLETE=<shell> ktrain LINE`: never a traceback, never a failure."""
    shell = os.environ.get(ENV_VAR, "bash")
    args = sys.argv[1:] if argv is None else argv
    line = args[-1] if args else ""
    try:
        from ktrain.completion.tree import load_tree

        result = answer(load_tree(), line)
        _, incomplete = split_line(line)
        sys.stdout.write(render_answer(result, shell, incomplete))
        sys.stdout.flush()
    except BaseException:  # noqa: BLE001 - a TAB press must never print a traceback
        if os.environ.get("KTRAIN_COMPLETE_DEBUG"):
            raise
    return 0
