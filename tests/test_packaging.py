"""The wheel carries the bundled runtimes and schemas inside the package."""

from __future__ import annotations

import subprocess
import sys
import zipfile

from conftest import REPO


def test_wheel_contains_runtimes_schemas_and_templates(tmp_path) -> None:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path),
            str(REPO),
        ],
        check=True,
        capture_output=True,
    )
    (wheel,) = tmp_path.glob("ktrain-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "ktrain/_bundled/runtimes/torch-distributed.yaml" in names
    assert "ktrain/_bundled/schemas/trainjob.schema.json" in names
    assert "ktrain/engine/plugins/torch.py" in names
    assert "ktrain/authoring/templates/trainjob.yaml.j2" in names  # `ktrain job init` needs it
    assert "ktrain/completion/tree.json" in names  # the completer reads it at every TAB press
    # the fast path finds its commands by these files: without them every command runs through typer
    assert "ktrain/cli/fast_commands/job.get.json" in names
    assert "ktrain/cli/fast_commands/render.json" in names
    # the console scripts: ktrain, the KRM function, the kubectl plugin and its completion
    (entry_points,) = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
    scripts = zipfile.ZipFile(wheel).read(entry_points).decode()
    for line in (
        "ktrain = ktrain.launcher:run",
        "ktrain-krm = ktrain.cli.krm:run",
        "kubectl-ktrain = ktrain.launcher:run",
        "kubectl_complete-ktrain = ktrain.completion.kubectl:run",
    ):
        assert line in scripts, scripts
