"""`kubectl_complete-ktrain`: TAB completion of `kubectl ktrain ...` (the kubectl plugin).

kubectl (1.26 and later) completes a plugin's arguments by running `kubectl_complete-<plugin>`
from PATH with the words after the plugin's name, the last one the word being completed
(`kubectl __complete ktrain job ''` runs `kubectl_complete-ktrain job ''`), and reads cobra's
`__complete` answer: one candidate per line (`value<TAB>description`), then `:<directive>`, the
sum of cobra's ShellCompDirective bits. The answer itself comes from the same command tree and
value providers as `ktrain`'s own completion (`ktrain.completion.complete.answer`).
"""

from __future__ import annotations

import os
import sys

# cobra's ShellCompDirective bits (spf13/cobra completions.go)
DIRECTIVE_ERROR = 1
DIRECTIVE_NO_SPACE = 2
DIRECTIVE_NO_FILE_COMP = 4
DIRECTIVE_FILTER_DIRS = 16

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"
if TYPE_CHECKING:
    from ktrain.completion.request import Answer


def _quote(word: str) -> str:
    """`word` as one shell word, for the line `ktrain.completion.complete.split_line` reads."""
    return "'" + word.replace("'", "'\\''") + "'"


def cobra_answer(result: Answer, incomplete: str = "") -> str:
    """An answer in cobra's `__complete` format. For `--flag=val` cobra's shell scripts complete
    the part after `=`: the values go without the `--flag=` ktrain's answer carries."""
    prefix = incomplete.partition("=")[0] + "=" if incomplete.startswith("--") and "=" in incomplete else ""
    if result.directive == "files":
        return ":0\n"  # cobra's default: the shell completes file names
    if result.directive == "dirs":
        return f":{DIRECTIVE_FILTER_DIRS}\n"
    directive = DIRECTIVE_NO_FILE_COMP | (DIRECTIVE_NO_SPACE if result.directive == "nospace" else 0)
    lines = []
    for value, description in result.items:
        value = value[len(prefix) :] if prefix and value.startswith(prefix) else value
        text = description.replace("\t", " ").replace("\n", " ")
        lines.append(f"{value}\t{text}" if text else value)
    return "".join(f"{line}\n" for line in lines) + f":{directive}\n"


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        from ktrain.completion.complete import answer
        from ktrain.completion.tree import load_tree

        words = args or [""]
        line = " ".join(["ktrain", *(_quote(w) for w in words[:-1]), words[-1]])
        # the word being completed goes in bare (split_line returns the text after the last
        # space as the incomplete word); a quote or a space in it is unusual enough to complete as typed
        if any(ch in words[-1] for ch in " \t\n'\"\\"):
            return _reply(f":{DIRECTIVE_NO_FILE_COMP}\n")
        return _reply(cobra_answer(answer(load_tree(), line), words[-1]))
    except BaseException:  # noqa: BLE001 - a TAB press must never print a traceback
        if os.environ.get("KTRAIN_COMPLETE_DEBUG"):
            raise
        return _reply(f":{DIRECTIVE_ERROR}\n")


def _reply(text: str) -> int:
    sys.stdout.write(text)
    sys.stdout.flush()
    return 0


def run() -> None:
    """The console script `kubectl_complete-ktrain`."""
    code = main()
    os._exit(code)  # the answer is flushed: skip the interpreter's shutdown, as `ktrain`'s completion does
