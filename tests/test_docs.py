"""docs/commands.md is what the live CLI generates, and the README's commands exist."""

from __future__ import annotations

import re

from conftest import REPO

from ktrain.cli.generate import commands_doc as generate


def test_command_reference_is_up_to_date() -> None:
    text = (REPO / "docs" / "commands.md").read_text()
    assert text == generate(), "docs/commands.md is stale: run `python -m ktrain.cli.generate`"


def test_every_ktrain_command_in_the_readme_is_in_the_reference() -> None:
    reference = generate()
    readme = (REPO / "README.md").read_text()
    used = set(re.findall(r"^\s*(?:\$ )?ktrain ((?:job|runtime|schema) [a-z]+)", readme, re.M))
    assert used, "the README shows no commands"
    for command in sorted(used):
        assert f"`ktrain {command}`" in reference, f"README uses `ktrain {command}`, which the CLI does not have"


def test_readme_template_example_renders(cli, tmp_path) -> None:
    readme = (REPO / "README.md").read_text()
    block = re.search(r"```yaml\n# job\.yaml\.j2\n(.*?)```", readme, re.S)
    assert block, "the README's job.yaml.j2 example is missing"
    (tmp_path / "job.yaml.j2").write_text(block.group(1))
    (tmp_path / "values.yaml").write_text("nodes: 2\n")
    r = cli(
        "job",
        "render",
        "-f",
        str(tmp_path / "job.yaml.j2"),
        "--values",
        str(tmp_path / "values.yaml"),
        "--set",
        "run=7",
        "--set",
        "lr=3e-4",
        "--set",
        "trainer.numNodes=8",
    )
    assert r.exit_code == 0, r.stderr
    assert "name: sweep-7" in r.stdout and "parallelism: 8" in r.stdout and "'3e-4'" in r.stdout
