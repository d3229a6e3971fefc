"""What a TAB press offers, through the same entry the shell scripts call."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from ktrain.completion import values
from ktrain.completion.complete import answer, split_line
from ktrain.completion.refresh import refresh
from ktrain.completion.tree import load_tree

BUNDLED = {
    "deepspeed-distributed",
    "jax-distributed",
    "mlx-distributed",
    "torch-distributed",
    "xgboost-distributed",
    "torchtune-llama3.2-1b",
    "torchtune-llama3.2-3b",
    "torchtune-qwen2.5-1.5b",
    # ktrain's own, for Training Operator v1 frameworks (issue #14)
    "tensorflow-distributed",
    "paddle-distributed",
    "mxnet-distributed",
}


def complete(line: str, shell: str = "bash", env: dict[str, str] | None = None) -> list[str]:
    """Run the console entry exactly as the shell scripts do; return its output lines."""
    out = subprocess.run(
        [sys.executable, "-m", "ktrain", line],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "_KTRAIN_COMPLETE": shell, **(env or {})},
    )
    assert out.stderr == ""
    return out.stdout.splitlines()


def values_of(result) -> list[str]:  # type: ignore[no-untyped-def]
    return [v for v, _ in result.items]


# A tree with the options and commands other branches add, to test the data-driven providers now.
FUTURE_TREE = {
    "format": 1,
    "root": {
        "options": [],
        "commands": {
            "job": {
                "options": [],
                "commands": {
                    "logs": {
                        "options": [
                            {"names": ["--step"], "takes_value": True, "help": ""},
                            {"names": ["--kubeconfig"], "takes_value": True, "help": ""},
                            {"names": ["--context"], "takes_value": True, "help": ""},
                            {"names": ["-n", "--namespace"], "takes_value": True, "help": ""},
                            {"names": ["-f", "--follow"], "takes_value": False, "help": ""},
                        ],
                        "arguments": [{"name": "name", "nargs": 1}],
                    },
                    "render": {
                        "options": [
                            {"names": ["--set"], "takes_value": True, "multiple": True, "help": ""},
                            {"names": ["--runtime"], "takes_value": True, "help": ""},
                            {"names": ["--kubeconfig"], "takes_value": True, "help": ""},
                        ]
                    },
                },
            },
        },
    },
}


def test_split_line_keeps_quotes_and_the_incomplete_word() -> None:
    assert split_line("ktrain job render --env 'A=b c' --runtime to") == (
        ["ktrain", "job", "render", "--env", "A=b c", "--runtime"],
        "to",
    )
    assert split_line("ktrain job ") == (["ktrain", "job"], "")
    assert split_line('ktrain "unclosed') == (["ktrain"], "unclosed")


def test_runtime_option_completes_bundled_runtime_names_through_the_entry_point() -> None:
    lines = complete("ktrain job render --runtime ")
    assert lines[0] == ":values"
    assert set(lines[1:]) == BUNDLED
    assert complete("ktrain render -r torch-")[1:] == ["torch-distributed"]


def test_bash_gets_the_part_after_the_equals_sign_zsh_the_whole_word() -> None:
    assert complete("ktrain job render --runtime=jax")[1:] == ["jax-distributed"]
    zsh = complete("ktrain job render --runtime=jax", shell="zsh")
    assert zsh[1].split("\t")[0] == "--runtime=jax-distributed"


def test_user_runtimes_from_flags_and_env_path_are_offered(tmp_path: Path) -> None:
    mine = tmp_path / "rt"
    mine.mkdir()
    (mine / "a.yaml").write_text(
        "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: ClusterTrainingRuntime\nmetadata: {name: my-own}\n"
        "spec: {template: {spec: {}}}\n"
    )
    assert "my-own" in complete(f"ktrain job render --runtimes-dir {mine} --runtime my")
    assert complete("ktrain job render --runtime my-", env={"KTRAIN_RUNTIMES_PATH": str(mine)})[1:] == ["my-own"]


def test_commands_options_and_output_formats() -> None:
    assert {"job", "runtime", "render", "completion"} <= set(complete("ktrain ")[1:])
    options = complete("ktrain job render --r")[1:]
    assert {
        "--runtime",
        "--runtime-kind",
        "--runtime-file",
        "--runtimes-dir",
        "--resource",
        "--requirements",
        "--restart-on-preemption",
        "--restart-strategy",
    } == set(options)
    assert complete("ktrain job render -o ")[1:] == ["yaml", "json", "name"]
    assert complete("ktrain runtime list -o ")[1:] == ["table", "wide", "yaml", "json", "name"]
    assert complete("ktrain job render --resource nv") == [":nospace", "nvidia.com/gpu="]
    assert set(complete("ktrain runtime show ")[1:]) == BUNDLED


def test_file_options_and_the_trainer_command_use_the_shells_file_completion() -> None:
    assert complete("ktrain job render -f ./jo") == [":files", "./jo"]
    assert complete("ktrain job render --runtime-file=run") == [":files", "run"]
    assert complete("ktrain job render --runtime-file=run", shell="fish") == [":files", "run", "--runtime-file="]
    assert complete("ktrain job render --runtimes-dir ")[0] == ":dirs"
    assert complete("ktrain job render --runtime x -- torchrun tr")[0] == ":files"


def test_a_broken_request_prints_no_traceback(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "ktrain"],
        capture_output=True,
        text=True,
        env={**os.environ, "_KTRAIN_COMPLETE": "bash", "KTRAIN_RUNTIMES_PATH": str(tmp_path / "x")},
    )
    assert out.returncode == 0 and "Traceback" not in out.stderr
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "broken.yaml").write_text("kind: [unclosed\n")
    lines = complete("ktrain job render --runtime ", env={"KTRAIN_RUNTIMES_PATH": str(bad)})
    assert set(lines[1:]) == BUNDLED


def test_step_set_and_job_names_complete_once_the_tree_has_those_options() -> None:
    result = answer(FUTURE_TREE, "ktrain job logs --step ")
    assert values_of(result) == ["dataset-initializer", "model-initializer", "launcher", "node"]
    result = answer(FUTURE_TREE, "ktrain job render --set trainer.numN")
    assert result.directive == "nospace" and values_of(result) == ["trainer.numNodes="]
    assert "metadata.name=" in values_of(answer(FUTURE_TREE, "ktrain job render --set meta"))
    # -f is a flag on `job logs`: the next word is the job name, not a file.
    assert answer(FUTURE_TREE, "ktrain job logs -f ").directive == "values"


def _kubeconfig(path: Path, contexts: dict[str, str], current: str) -> Path:
    lines = ["apiVersion: v1", "kind: Config", f"current-context: {current}", "contexts:"]
    for name, ns in contexts.items():
        lines += [f"- name: {name}", "  context:", "    cluster: c", "    user: u", f"    namespace: {ns}"]
    lines += ["users:", "- name: u", "  user:", "    token: s3cr3t-token"]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_contexts_and_namespaces_come_from_every_kubeconfig_file(tmp_path: Path, monkeypatch) -> None:
    a = _kubeconfig(tmp_path / "a", {"prod": "ml", "dev": "team-a"}, "prod")
    b = _kubeconfig(tmp_path / "b", {"dev": "ignored", "kind": "default"}, "kind")
    monkeypatch.setenv("KUBECONFIG", f"{a}{os.pathsep}{b}")
    monkeypatch.setenv("KTRAIN_CACHE_DIR", str(tmp_path / "cache"))
    assert values_of(answer(FUTURE_TREE, "ktrain job logs --context ")) == ["dev", "kind", "prod"]
    # the first file that names a context wins, as in kubectl
    assert dict(answer(FUTURE_TREE, "ktrain job logs --context d").items)["dev"] == "team-a"
    namespaces = values_of(answer(FUTURE_TREE, "ktrain job logs -n "))
    assert {"ml", "team-a", "default"} <= set(namespaces) and "ignored" not in namespaces
    only_b = values_of(answer(FUTURE_TREE, f"ktrain job logs --kubeconfig {b} --context "))
    assert only_b == ["dev", "kind"]
    cached = "".join(p.read_text() for p in (tmp_path / "cache").rglob("*.json"))
    assert "s3cr3t" not in cached  # names only: credentials never reach the cache


def test_cluster_values_come_from_a_fresh_cache_without_starting_a_refresh(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("KTRAIN_CACHE_DIR", str(tmp_path / "cache"))
    kubeconfig = _kubeconfig(tmp_path / "kc", {"prod": "ml"}, "prod")
    given = {"--kubeconfig": [str(kubeconfig)]}
    entry = values._cluster_entry_path(values.connection_args(given))
    Path(entry).parent.mkdir(parents=True)
    Path(entry).write_text(json.dumps({"time": time.time(), "runtimes": ["on-cluster"], "jobs": ["job-a", "job-b"]}))
    started = []
    monkeypatch.setattr(values, "_start_refresh", lambda *a: started.append(a))
    result = answer(FUTURE_TREE, f"ktrain job logs --kubeconfig {kubeconfig} ")
    assert values_of(result) == ["job-a", "job-b"]
    assert "on-cluster" in values_of(answer(FUTURE_TREE, f"ktrain job render --kubeconfig {kubeconfig} --runtime o"))
    assert started == []
    # Stale: the old values are still offered at once, and one background refresh is started.
    Path(entry).write_text(json.dumps({"time": time.time() - 3600, "runtimes": [], "jobs": ["old"]}))
    assert values_of(answer(FUTURE_TREE, f"ktrain job logs --kubeconfig {kubeconfig} ")) == ["old"]
    assert len(started) == 1


def test_refresh_reads_the_cli_name_output_and_treats_failure_as_no_values(tmp_path: Path) -> None:
    fake = tmp_path / "fake-ktrain"
    fake.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = runtime ]; then\n'
        "  echo clustertrainingruntime.trainer.kubeflow.org/big-torch\n"
        "  echo trainingruntime.trainer.kubeflow.org/team-rt\n"
        "  exit 0\nfi\n"
        "exit 2\n"
    )
    fake.chmod(0o755)
    entry = tmp_path / "entry.json"
    result = refresh(str(entry), ["--context", "prod"], cli=[str(fake)])
    assert result["runtimes"] == ["big-torch", "team-rt"] and result["jobs"] == []
    assert json.loads(entry.read_text())["runtimes"] == ["big-torch", "team-rt"]


def test_a_slow_cluster_cannot_hang_the_refresh(tmp_path: Path, monkeypatch) -> None:
    from ktrain.completion import refresh as refresh_module

    slow = tmp_path / "slow"
    slow.write_text("#!/bin/sh\nsleep 30\n")
    slow.chmod(0o755)
    monkeypatch.setattr(refresh_module, "TIME_LIMIT", 0.5)
    started = time.monotonic()
    result = refresh(str(tmp_path / "e.json"), [], cli=[str(slow)])
    assert time.monotonic() - started < 5
    assert result["runtimes"] == [] and result["jobs"] == []


def test_completion_script_commands_print_the_checked_in_scripts(cli) -> None:
    root = Path(__file__).resolve().parents[2] / "completions"
    for shell, name in (
        ("bash", "ktrain.bash"),
        ("zsh", "_ktrain"),
        ("fish", "ktrain.fish"),
        ("powershell", "ktrain.ps1"),
    ):
        r = cli("completion", shell)
        assert r.exit_code == 0
        assert r.stdout == (root / name).read_text()


def test_install_writes_standard_locations_once(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("XDG_")}
    env["HOME"] = str(tmp_path)

    def install(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "ktrain", "completion", "install", *args], capture_output=True, text=True, env=env
        )

    for _ in range(2):
        r = install("--shell", "bash")
        assert r.returncode == 0, r.stderr
    script = tmp_path / ".local/share/bash-completion/completions/ktrain"
    assert "_ktrain_complete" in script.read_text()
    assert (tmp_path / ".bashrc").read_text().count("ktrain completion install") == 1
    assert install("--shell", "fish").returncode == 0
    assert (tmp_path / ".config/fish/completions/ktrain.fish").is_file()
    assert install("--shell", "zsh").returncode == 0
    assert (tmp_path / ".zfunc/_ktrain").is_file() and "fpath+=" in (tmp_path / ".zshrc").read_text()
    env["SHELL"] = "/bin/tcsh"
    r = install()
    assert r.returncode == 2 and "--shell" in r.stderr and "Traceback" not in r.stderr


def test_tree_lists_every_command() -> None:
    tree = load_tree()["root"]["commands"]
    assert {"render", "list", "show"} <= set(tree["job"]["commands"]) | set(tree["runtime"]["commands"])
