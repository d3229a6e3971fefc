"""Hostile values through the `--code`/`--pip` wrapper (issue #24, item 1): package names, index
URLs, env values, file names and the command's arguments holding quotes, `$()`, backticks,
`${VAR}`, newlines, `;`, `&` or any unicode are rendered, read back as kubectl would read the
YAML, expanded as the kubelet expands `$(VAR)`, and run with each shell an image may have as
`sh` (dash, bash; busybox when present). Stubs stand in for python (pip) and the command and
record what they get: every value must arrive byte for byte, nothing else may run, nothing may
be expanded."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ktrain.inputs.registry import RuntimeRegistry
from ktrain.output.yamltext import dump_all
from ktrain.service.render import render_request
from ktrain.service.requests import JobOverrides, RenderRequest
from tests.pod_run import kubelet_expand, run_container, write_exe

SHELLS = [s for s in ("/usr/bin/dash", "/usr/bin/sh", "/bin/bash", "/bin/busybox") if shutil.which(s)]
EVIL = [
    "$(touch PWNED)",
    "`touch PWNED`",
    'a"; touch PWNED; "',
    '"',
    "'",
    "${HOME}",
    "$HOME",
    "$(HOME)",
    "$$",
    "$",
    "\\",
    "\\c",
    "%s%n",
    "x\ntouch PWNED",
    "x\r\ntouch PWNED",
    "\r",
    "a;touch PWNED",
    "a&&touch PWNED&",
    "a|touch PWNED",
    "*",
    "é 中 🙂",
    "",
    "-n",
]
# Anything a command line can carry: no NUL (argv cannot hold it), no lone surrogates.
TEXT = st.one_of(
    st.sampled_from(EVIL),
    st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=24),
    st.text(st.sampled_from(list("$(){}`'\"\\;&|<>*?! \n\tab-=")), max_size=16),
)
PACKAGE = TEXT.filter(lambda v: not v.startswith("-"))  # a leading "-" is refused (pip would read an option)
FILE_NAME = (
    TEXT.map(lambda v: v.replace("/", "_").replace("\x00", ""))
    .filter(lambda v: v not in ("", ".", "..") and not v.startswith(".."))
    .filter(lambda v: len(v.encode()) < 200)
)

RECORDER = """#!{python}
import json, os, sys
with open(os.environ["RECORD"], "a", encoding="utf-8") as f:
    f.write(json.dumps({{"who": os.path.basename(sys.argv[0]), "argv": sys.argv[1:], "cwd": os.getcwd(),
                        "env": os.environ.get("HOSTILE"),
                        "files": sorted(os.listdir("."))}}) + "\\n")
"""


# Open MPI's mpirun as a stub: its options, then the program, run once (on "every host" for the
# wrapper's fan-out, `--map-by ppr:1:node`) with the argv it was given.
MPIRUN = """#!{python}
import subprocess, sys
argv = sys.argv[1:]
while argv and argv[0].startswith("-"):
    argv = argv[2:] if argv[0] in ("--hostfile", "--map-by") else argv[1:]
sys.exit(subprocess.call(argv))
"""


def _run(
    tmp_path: Path,
    shell: str,
    packages: list[str],
    index_urls: list[str],
    env_value: str,
    file_names: list[str],
    args: list[str],
    runtime: str = "torch-distributed",
) -> tuple[Any, list[dict[str, Any]], list[str], dict[str, Path]]:
    project = tmp_path / "project"
    project.mkdir()
    for name in file_names:
        (project / name).write_text(f"# {name!r}\n")
    (project / "train.py").write_text("print(1)\n")
    mpi = runtime != "torch-distributed"
    overrides = JobOverrides(
        runtime=runtime,
        name="hostile",
        code=[str(project)],
        command=["mpirun", "train-stub", *args] if mpi else ["train-stub", *args],
        pip=packages,
        pip_index_urls=index_urls,
        env=[("HOSTILE", env_value)],
    )
    request = RenderRequest(overrides=overrides, ssh_secret="keys" if mpi else None)
    objects = render_request(request, RuntimeRegistry()).result.objects
    objects = list(yaml.safe_load_all(dump_all(objects)))  # as kubectl reads what ktrain prints
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for stub in ("python3", "python", "train-stub"):
        write_exe(bin_dir / stub, RECORDER.format(python=sys.executable))
    write_exe(bin_dir / "mpirun", MPIRUN.format(python=sys.executable))
    record = tmp_path / "record.jsonl"
    result, mounts = run_container(objects, tmp_path / "pod", bin_dir, {"RECORD": str(record)}, shell=shell)
    calls = [json.loads(line) for line in record.read_text(encoding="utf-8").splitlines()] if record.exists() else []
    pwned = [str(p) for p in tmp_path.rglob("PWNED")]
    return result, calls, pwned, mounts


def _pip_args(packages: list[str], index_urls: list[str]) -> list[str]:
    args: list[str] = []
    for i, url in enumerate(index_urls):
        args += ["--index-url" if i == 0 else "--extra-index-url", url]
    return args + packages


@pytest.mark.parametrize("shell", SHELLS)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    packages=st.lists(PACKAGE, min_size=1, max_size=3),
    index_urls=st.lists(TEXT, max_size=2),
    env_value=TEXT,
    file_names=st.lists(FILE_NAME, max_size=3, unique_by=lambda v: v.casefold()),
    args=st.lists(TEXT, max_size=4),
)
def test_hostile_values_arrive_byte_for_byte_and_run_nothing(
    tmp_path_factory: pytest.TempPathFactory,
    shell: str,
    packages: list[str],
    index_urls: list[str],
    env_value: str,
    file_names: list[str],
    args: list[str],
) -> None:
    tmp_path = tmp_path_factory.mktemp("hostile")
    file_names = [n for n in file_names if n != "train.py"]
    result, calls, pwned, mounts = _run(tmp_path, shell, packages, index_urls, env_value, file_names, args)
    assert result.returncode == 0, result.stderr
    assert pwned == []
    pip, command = calls  # exactly two programs ran: pip, then the command
    assert pip["who"] == "python3"
    assert pip["argv"] == [
        "-m",
        "pip",
        "install",
        "--quiet",
        "--no-warn-script-location",
        *_pip_args(packages, [*index_urls]),
    ]
    assert command["who"] == "train-stub"
    # The command's words mean what they mean without the wrapper: only the kubelet's `$(VAR)`.
    assert command["argv"] == [kubelet_expand(a, {"HOSTILE": env_value}) for a in args]
    assert command["env"] == env_value
    assert command["cwd"] == str(mounts["/opt/ktrain/code"])
    assert command["files"] == sorted([*file_names, "train.py"])
    assert result.stderr == "ktrain: pip install" + "".join(f" {p}" for p in packages) + "\n"


@pytest.mark.parametrize("shell", SHELLS)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    packages=st.lists(PACKAGE, min_size=1, max_size=3),
    index_urls=st.lists(TEXT, max_size=2),
    file_names=st.lists(FILE_NAME, max_size=2, unique_by=lambda v: v.casefold()),
    args=st.lists(TEXT, max_size=3),
)
def test_on_mpi_the_fan_out_to_every_host_passes_the_same_bytes(
    tmp_path_factory: pytest.TempPathFactory,
    shell: str,
    packages: list[str],
    index_urls: list[str],
    file_names: list[str],
    args: list[str],
) -> None:
    """The launcher's wrapper runs the node script here and, through `mpirun --map-by
    ppr:1:node`, on every host: both installs get the values byte for byte, then the command."""
    tmp_path = tmp_path_factory.mktemp("hostile-mpi")
    file_names = [n for n in file_names if n != "train.py"]
    result, calls, pwned, mounts = _run(
        tmp_path, shell, packages, index_urls, "", file_names, args, runtime="deepspeed-distributed"
    )
    assert result.returncode == 0, result.stderr
    assert pwned == []
    here, every_host, command = calls
    expected = ["-m", "pip", "install", "--quiet", "--no-warn-script-location", *_pip_args(packages, index_urls)]
    assert here["argv"] == every_host["argv"] == expected
    assert command["who"] == "train-stub"
    assert command["argv"] == [kubelet_expand(a, {"HOSTILE": ""}) for a in args]
    assert command["cwd"] == str(mounts["/opt/ktrain/code"])
    assert command["files"] == sorted([*file_names, "train.py"])
    assert result.stderr == 2 * ("ktrain: pip install" + "".join(f" {p}" for p in packages) + "\n")


@pytest.mark.parametrize("shell", SHELLS)
@pytest.mark.parametrize("evil", EVIL[:5])
def test_the_issue_s_injections_run_nothing(tmp_path: Path, shell: str, evil: str) -> None:
    """`--pip 'numpy$(touch PWNED)'` and friends, one by one, with every shell."""
    result, calls, pwned, _ = _run(tmp_path, shell, [f"numpy{evil}"], [], "", [], [evil])
    assert result.returncode == 0, result.stderr
    assert pwned == []
    assert [c["who"] for c in calls] == ["python3", "train-stub"]
    assert calls[0]["argv"][-1] == f"numpy{evil}"


def test_a_token_in_a_package_url_is_neither_expanded_in_the_log_nor_for_pip(tmp_path: Path) -> None:
    package = "pkg @ git+https://${GH_TOKEN}@host/r"
    result, calls, _, _ = _run(tmp_path, "/usr/bin/sh", [package], [], "", [], [])
    assert result.stderr == f"ktrain: pip install {package}\n"
    assert calls[0]["argv"][-1] == package


def test_index_urls_stay_out_of_the_pod_log(tmp_path: Path) -> None:
    url = "https://user:s3cret@pypi.example/simple"
    result, calls, _, _ = _run(tmp_path, "/usr/bin/sh", ["numpy"], [url], "", [], [])
    assert "s3cret" not in result.stderr
    assert calls[0]["argv"][-3:] == ["--index-url", url, "numpy"]
