"""Regenerate the completion command tree and the static scripts in `completions/`.

Run after adding or changing a command or an option:  python -m ktrain.completion.generate
(tests/architecture/test_completion_sync.py fails until you do).
"""

from __future__ import annotations

from pathlib import Path

from ktrain.completion.scripts import generated_files
from ktrain.completion.tree import TREE_FILE, build_tree, tree_text

COMPLETIONS_DIR = Path(__file__).resolve().parents[2] / "completions"


def main() -> None:
    Path(TREE_FILE).write_text(tree_text(build_tree()), encoding="utf-8")
    print(f"wrote {TREE_FILE}")
    if COMPLETIONS_DIR.is_dir():
        for name, text in generated_files().items():
            (COMPLETIONS_DIR / name).write_text(text, encoding="utf-8")
            print(f"wrote {COMPLETIONS_DIR / name}")


if __name__ == "__main__":
    main()
