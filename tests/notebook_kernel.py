"""Run a notebook's code cells in one namespace, as a Jupyter kernel would, and record what each
cell printed, the value it displayed (the repr of a last expression that is not None) and the
error it raised: `python notebook_kernel.py CELLS.json OUT.json` (tests/test_sdk_notebooks.py).

Each cell is written to its own file (`cell_<n>.py`, in the working directory) before it runs, so
that `inspect.getsource` finds the functions it defines, as IPython's cell cache lets it. A cell
that raises does not stop the others (the comparison sees every cell).
"""

from __future__ import annotations

import ast
import contextlib
import io
import json
import sys
import traceback
from pathlib import Path


def run(cells: list[str], progress: Path | None = None) -> list[dict[str, object]]:
    namespace: dict[str, object] = {"__name__": "__main__"}
    out = []
    for index, source in enumerate(cells):
        path = Path(f"cell_{index}.py").resolve()
        path.write_text(source)
        record: dict[str, object] = {"stdout": "", "value": None, "error": None}
        buffer = io.StringIO()
        try:
            tree = ast.parse(source, filename=str(path))
            last = None
            if tree.body and isinstance(tree.body[-1], ast.Expr):
                last = ast.Expression(tree.body.pop().value)
            with contextlib.redirect_stdout(buffer):
                exec(compile(tree, str(path), "exec"), namespace)  # noqa: S102 - the notebook's own code
                if last is not None:
                    value = eval(compile(last, str(path), "eval"), namespace)  # noqa: S307
                    if value is not None:
                        record["value"] = repr(value)
        except BaseException as exc:  # noqa: BLE001 - a cell's error is what it shows
            record["error"] = f"{type(exc).__name__}: {exc}"
            causes, cause = [], exc.__cause__ or exc.__context__
            while cause is not None and len(causes) < 5:  # what the SDK wraps (an ApiException's body)
                causes.append(f"{type(cause).__name__}: {cause}")
                cause = cause.__cause__ or cause.__context__
            record["causes"] = causes
            record["mro"] = [k.__name__ for k in type(exc).__mro__]
            record["traceback"] = traceback.format_exc(limit=-3)
        record["stdout"] = buffer.getvalue()
        out.append(record)
        if progress is not None:  # what ran so far, for a run that does not end
            progress.write_text(json.dumps(out))
    return out


if __name__ == "__main__":
    cells = json.loads(Path(sys.argv[1]).read_text())
    result = run(cells, Path(sys.argv[2] + ".partial"))
    Path(sys.argv[2]).write_text(json.dumps(result))
