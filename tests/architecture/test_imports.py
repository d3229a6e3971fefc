"""The cold paths stay light (a CI guard, not a timed test: see benchmarks/ for timings).

Rendering, local `runtime list` and shell completion must not import the kubernetes client,
jsonschema, jinja2 or rich; completion must not even import typer or pydantic.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ENGINE = Path(__file__).resolve().parents[2] / "ktrain" / "engine"


def test_rendering_never_imports_heavy_modules() -> None:
    code = (
        "import sys\n"
        "from ktrain.cli import main\n"
        "main(['render', '--runtime', 'deepspeed-distributed', '--nodes', '4', '-o', 'name'])\n"
        "heavy = [m for m in ('kubernetes', 'jsonschema', 'jinja2') if m in sys.modules]\n"
        "print('HEAVY', heavy)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "HEAVY []" in out.stdout, out.stdout + out.stderr


def _cli_modules_after(argv: list[str], stdin: str = "") -> str:
    code = (
        "import sys, io\n"
        f"sys.stdin = io.StringIO({stdin!r})\n"
        "from ktrain.cli import main\n"
        f"code = main({argv!r})\n"
        "print('CODE', code, 'LOADED', [m for m in ('kubernetes', 'jsonschema', 'jinja2') if m in sys.modules])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout


def test_plain_job_file_with_set_does_not_import_jinja2() -> None:
    job = "kind: TrainJob\nspec:\n  runtimeRef: {name: torch-distributed}\n"
    out = _cli_modules_after(["render", "-f", "-", "--set", "trainer.numNodes=2", "-o", "name"], job)
    assert "CODE 0 LOADED []" in out, out


def test_only_a_template_imports_jinja2() -> None:
    job = "kind: TrainJob\nspec:\n  runtimeRef: {name: '{{ rt }}'}\n"
    out = _cli_modules_after(["render", "-f", "-", "--set", "rt=torch-distributed", "-o", "name"], job)
    assert "CODE 0 LOADED ['jinja2']" in out, out


def test_validate_init_and_explain_stay_off_the_cluster_client() -> None:
    for argv in (
        ["job", "validate", "--runtime", "torch-distributed"],
        ["job", "init", "-r", "torch-distributed"],
        ["render", "--runtime", "torch-distributed", "--explain"],
    ):
        out = _cli_modules_after(argv)
        assert "CODE 0" in out and "kubernetes" not in out.split("LOADED", 1)[1], (argv, out)


def _loaded_modules(code: str, env: dict[str, str] | None = None) -> set[str]:
    """Every module name in sys.modules after running `code` in a fresh interpreter."""
    probe = code + "\nimport sys\nprint('MODULES', ' '.join(sorted(sys.modules)))\n"
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, env={**os.environ, **(env or {})}
    )
    line = next(line for line in out.stdout.splitlines() if line.startswith("MODULES "))
    return set(line.split()[1:])


def _modules_after(code: str, env: dict[str, str] | None = None) -> set[str]:
    """Top-level package names in sys.modules after running `code` in a fresh interpreter."""
    return {name.split(".")[0] for name in _loaded_modules(code, env)}


RENDER = (
    "from ktrain.cli import main\n"
    "main(['render', '--runtime', 'torch-distributed', '--nodes', '4', '--', 'torchrun', 'x'])"
)


def test_render_imports_no_heavy_module_and_no_yaml_parser_once_the_cache_is_warm() -> None:
    _modules_after(RENDER)  # fills the runtime parse cache (a private one: see conftest)
    loaded = _modules_after(RENDER)
    assert not loaded & {"kubernetes", "jsonschema", "jinja2", "rich", "ruamel", "yaml"}, loaded


def _console_script(*argv: str, code: int = 0) -> str:
    return (
        f"import sys\nsys.argv = ['ktrain', *{list(argv)!r}]\nfrom ktrain.launcher import run\ntry:\n"
        f"    run()\nexcept SystemExit as exc:\n    assert exc.code == {code}, exc.code"
    )


# What a cold render must not load: the start-up cost of each is a large part of a Go CLI's
# whole run (see benchmarks/). dataclasses pulls in inspect; ktrain.util.structs stands in for it.
COLD_RENDER_FORBIDDEN = {
    "typer",
    "click",
    "rich",
    "kubernetes",
    "jsonschema",
    "jinja2",
    "pydantic",
    "pydantic_core",
    "dataclasses",
    "inspect",
    "pathlib",
    "difflib",
}


@pytest.mark.parametrize(
    "argv",
    [
        ("job", "render", "--runtime", "torch-distributed", "--nodes", "4", "--", "torchrun", "x"),
        ("render", "--runtime", "deepspeed-distributed", "--ssh-secret", "keys", "-e", "LR=1", "-o", "json"),
        (
            "render",
            "--runtime",
            "torch-distributed",
            "--set",
            "trainer.numNodes=2",
            "--set",
            "suspend=true",
            "-o",
            "name",
        ),
    ],
    ids=["torch", "deepspeed-json", "set"],
)
def test_the_console_script_renders_without_typer_pydantic_or_other_heavy_modules(argv: tuple[str, ...]) -> None:
    """`ktrain job render` takes the typer-free fast path (ktrain.cli.fastpath) and reads its
    inputs into plain records (ktrain.api.records)."""
    code = _console_script(*argv)
    _modules_after(code, {"KTRAIN_NO_FASTPATH": ""})  # fills the runtime parse cache
    loaded = _modules_after(code, {"KTRAIN_NO_FASTPATH": ""})
    assert not loaded & COLD_RENDER_FORBIDDEN, loaded & COLD_RENDER_FORBIDDEN
    assert "ktrain" in loaded


# What the other fast commands (ktrain.cli.fastpath.COMMANDS) must not load. Each may need one
# heavy module for its own work, allowed below: validation is jsonschema's job (which itself
# imports dataclasses), the starter file is a jinja2 template (which imports inspect).
COLD_COMMAND_FORBIDDEN = {
    "typer",
    "click",
    "pydantic",
    "pydantic_core",
    "dataclasses",
    "kubernetes",
    "jsonschema",
    "jinja2",
    "rich",
}


@pytest.mark.parametrize(
    "argv, needed",
    [
        (("runtime", "list", "-o", "name", "--source", "local"), set()),
        (("runtime", "show", "torch-distributed", "--source", "local"), set()),
        (("job", "init", "-r", "torch-distributed"), {"jinja2"}),
        (("job", "validate", "--runtime", "torch-distributed", "--nodes", "2"), {"jsonschema", "dataclasses"}),
    ],
    ids=["runtime-list", "runtime-show", "job-init", "job-validate"],
)
def test_the_other_fast_commands_import_no_typer_pydantic_or_cluster_client(
    argv: tuple[str, ...], needed: set[str]
) -> None:
    """They take the fast path too; `needed` is loaded (the probe ran the command), nothing else."""
    code = _console_script(*argv)
    _modules_after(code, {"KTRAIN_NO_FASTPATH": ""})  # fills the runtime parse cache
    loaded = _modules_after(code, {"KTRAIN_NO_FASTPATH": ""})
    assert loaded & COLD_COMMAND_FORBIDDEN == needed, loaded & COLD_COMMAND_FORBIDDEN


# What `--help` (any command's, or a group given alone) and a local `runtime list` table must not
# load: help is rendered from the command tree (ktrain.cli.helptext), the table as plain columns
# when stdout is not a terminal (ktrain.output.tables), the runtimes from the parse cache.
HELP_AND_LIST_FORBIDDEN = {
    "typer",
    "click",
    "rich",
    "pydantic",
    "pydantic_core",
    "ruamel",
    "jinja2",
    "jsonschema",
    "kubernetes",
    "yaml",
}


@pytest.mark.parametrize(
    "argv, code",
    [
        (("--help",), 0),
        ((), 2),
        (("job",), 2),
        (("job", "create", "--help"), 0),
        (("render", "-h"), 0),
        (("runtime", "show", "-h"), 0),
        (("completion", "install", "--help"), 0),
        (("runtime", "list"), 0),
        (("runtime", "list", "-o", "wide"), 0),
    ],
    ids=[
        "help",
        "ktrain",
        "group",
        "job-create-help",
        "render-h",
        "runtime-show-h",
        "group-command-help",
        "runtime-list",
        "runtime-list-wide",
    ],
)
def test_help_and_the_runtime_table_import_no_heavy_module(argv: tuple[str, ...], code: int) -> None:
    script = _console_script(*argv, code=code)
    _modules_after(script, {"KTRAIN_NO_FASTPATH": ""})  # fills the runtime parse cache
    loaded = _modules_after(script, {"KTRAIN_NO_FASTPATH": ""})
    assert not loaded & HELP_AND_LIST_FORBIDDEN, loaded & HELP_AND_LIST_FORBIDDEN
    assert "ktrain" in loaded


def test_local_runtime_list_does_not_import_the_cluster_client_or_rich() -> None:
    loaded = _modules_after("from ktrain.cli import main\nmain(['runtime', 'list', '-o', 'name'])")
    assert not loaded & {"kubernetes", "jsonschema", "jinja2", "rich"}, loaded


# The launcher ends a completion request with os._exit: the probe makes that a SystemExit.
_COMPLETION = (
    "import os, sys\nsys.argv = ['ktrain', 'ktrain job render --runtime ']\nfrom ktrain.launcher import run\n"
    "def _exit(code):\n    raise SystemExit(code)\nos._exit = _exit\n"
    "try:\n    run()\nexcept SystemExit:\n    pass"
)


def test_a_completion_request_imports_neither_typer_nor_pydantic() -> None:
    code = _COMPLETION
    _modules_after(code, {"_KTRAIN_COMPLETE": "bash"})
    loaded = _modules_after(code, {"_KTRAIN_COMPLETE": "bash"})
    heavy = {
        "typer",
        "click",
        "pydantic",
        "pydantic_core",
        "ruamel",
        "rich",
        "kubernetes",
        "jsonschema",
        "jinja2",
        "yaml",
        "cryptography",
        "shellingham",
    }
    assert not loaded & heavy, loaded & heavy


def test_kubectl_plugin_completion_imports_neither_typer_nor_pydantic() -> None:
    """`kubectl_complete-ktrain` (kubectl runs it on every TAB after `kubectl ktrain`)."""
    code = (
        "import os, sys\nsys.argv = ['kubectl_complete-ktrain', 'job', 'render', '--runtime', '']\n"
        "from ktrain.completion.kubectl import run\n"
        "def _exit(code):\n    raise SystemExit(code)\nos._exit = _exit\n"
        "try:\n    run()\nexcept SystemExit:\n    pass"
    )
    _modules_after(code)
    loaded = _modules_after(code)
    assert not loaded & {"typer", "click", "pydantic", "ruamel", "rich", "kubernetes", "jsonschema", "yaml"}, loaded


def test_the_krm_function_renders_without_typer_or_the_cluster_client() -> None:
    """`ktrain-krm` runs once per kustomize build: the render path, plus a YAML parser for its input."""
    resource_list = (
        "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n"
        "- apiVersion: trainer.kubeflow.org/v1alpha1\n  kind: TrainJob\n  metadata: {name: t}\n"
        "  spec: {runtimeRef: {name: torch-distributed}, trainer: {numNodes: 2}}\n"
    )
    code = (
        f"import io, sys\nsys.stdin = io.StringIO({resource_list!r})\nsys.stdout = io.StringIO()\n"
        "from ktrain.cli.krm import main\ncode = main([])\nout, sys.stdout = sys.stdout, sys.__stdout__\n"
        "assert code == 0 and 'kind: JobSet' in out.getvalue(), out.getvalue()"
    )
    loaded = _modules_after(code)
    heavy = {"typer", "click", "rich", "kubernetes", "jsonschema", "jinja2", "yaml", "urllib3", "cryptography"}
    assert not loaded & heavy, loaded & heavy


def test_engine_does_no_io() -> None:
    forbidden = re.compile(
        r"^\s*(import|from)\s+(os|pathlib|io|socket|subprocess|random|secrets|uuid|time|kubernetes|"
        r"rich|typer|ruamel|jinja2|jsonschema)\b",
        re.M,
    )
    for path in ENGINE.rglob("*.py"):
        text = path.read_text()
        assert not forbidden.search(text), path
        assert "open(" not in text and "print(" not in text and "input(" not in text, path


def test_rendering_valid_input_does_not_import_pydantic() -> None:
    """Valid jobs and runtimes are read into plain records (ktrain.api.records); pydantic is
    imported only to coerce or explain input the records refuse."""
    code = (
        "from ktrain.inputs.registry import RuntimeRegistry\n"
        "from ktrain.service.requests import JobOverrides, RenderRequest\n"
        "from ktrain.service.render import render_request\n"
        "from ktrain.output.manifests import format_objects\n"
        "for runtime in ('torch-distributed', 'deepspeed-distributed'):\n"
        "    ov = JobOverrides(runtime=runtime, nodes=4, command=['torchrun', 'x'], env=[('LR', '1e-3')],\n"
        "                      limits={'nvidia.com/gpu': '2'}, queue='q')\n"
        "    out = render_request(RenderRequest(overrides=ov, ssh_secret='keys'), RuntimeRegistry())\n"
        "    format_objects(out.result.objects, 'yaml')\n"
    )
    loaded = _modules_after(code)
    assert not loaded & {"pydantic", "pydantic_core", "typer"}, loaded
    # and input that needs pydantic still gets it (here: to explain the error)
    bad = code.replace("nodes=4", "nodes=4.0")
    probe = subprocess.run([sys.executable, "-c", bad], capture_output=True, text=True)
    assert probe.returncode != 0 and "numNodes: must be an integer" in probe.stderr, probe.stderr[-800:]


# What a cluster command must not load on the common path (issue #17): the kubernetes client and
# what it drags in (pydantic models, urllib3, requests-oauthlib, dateutil) cost 0.3-0.5 s, several
# times a whole `kubectl get`; typer, click and rich are for help and terminals.
# Deliberately allowed since issue #25: `http.client` and what it imports (`email.parser`,
# `email.message`, `re`, `urllib.parse`), about 16 ms. ktrain once framed HTTP itself to save them
# and met a parser's classic bugs (`²00` as a status, a 5,000-digit Content-Length, errors from
# inside a body); `job list` / `job get` stay within 1.5x `kubectl get` with them (benchmarks/run.py).
CLUSTER_FORBIDDEN = {
    "typer",
    "click",
    "rich",
    "kubernetes",
    "urllib3",
    "requests",
    "oauthlib",
    "requests_oauthlib",
    "dateutil",
    "pydantic",
    "pydantic_core",
    "jinja2",
    "jsonschema",
    "dataclasses",
    # ktrain's locks are `_thread`'s (what threading.Lock is); only `job logs -f` starts threads
    "threading",
}


@pytest.mark.parametrize(
    "argv, printed, verb",
    [
        (("job", "list", "-o", "wide"), "seen ", "list"),
        (("job", "get", "seen"), "Name:", "get"),
        (("job", "why", "seen"), "Running: job seen is running", "get"),
        (("job", "logs", "seen"), "hello from rank 0", "get"),
        (("job", "wait", "seen", "--for", "running", "--timeout", "5s"), "", "get"),
        (("job", "delete", "seen", "--yes"), "deleted", "delete"),
        (
            ("job", "create", "-r", "torch-distributed", "--name", "made"),
            "jobset.jobset.x-k8s.io/made created",
            "apply",
        ),
    ],
    ids=["job-list", "job-get", "job-why", "job-logs", "job-wait", "job-delete", "job-create"],
)
@pytest.mark.double
@pytest.mark.parametrize("tls", [False, True], ids=["http", "https"])
def test_cluster_commands_load_neither_the_kubernetes_client_nor_typer(
    argv: tuple[str, ...], printed: str, verb: str, tls: bool, tmp_path: Path
) -> None:
    """Each cluster command through the console script, against the API-server double (plain and
    HTTPS with a client certificate): the fast path, ktrain's own HTTP client, nothing heavy."""
    from apiserver import ApiServerDouble
    from apiserver.seeding import seed_running_job

    # a token only over HTTPS: kubectl (and ktrain) send no credentials to an http:// server
    with ApiServerDouble(token="t0k3n" if tls else None, tls=tls) as srv:
        kubeconfig = seed_running_job(srv, tmp_path, client_certificate=tls)
        code = _console_script(*argv, "--kubeconfig", str(kubeconfig))
        # Counted from the launcher's start: importing ktrain.launcher itself may compile it first
        # (no bytecode where PYTHONDONTWRITEBYTECODE is set), which is no command's cost.
        counted = (
            "from ktrain.launcher import run\nimport gc\n_collected = [s['collections'] for s in gc.get_stats()]\n"
        )
        probe = (
            code.replace("from ktrain.launcher import run\n", counted, 1)
            + "\nprint('MODULES', ' '.join(sorted({m.split('.')[0] for m in sys.modules})))\n"
            + "print('COLLECTIONS', sum(s['collections'] for s in gc.get_stats()) - sum(_collected))\n"
        )
        env = {**os.environ, "KTRAIN_NO_FASTPATH": ""}
        env.pop("KTRAIN_KUBE_CLIENT", None)
        out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env)
        reached = srv.requests_for(verb=verb, resource="pods/log" if argv[1] == "logs" else "jobsets")
    assert out.returncode == 0, out.stdout + out.stderr
    assert reached, "the command never reached the cluster"
    assert printed in out.stdout + out.stderr, out.stdout + out.stderr
    line = next(line for line in out.stdout.splitlines() if line.startswith("MODULES "))
    loaded = set(line.split()[1:])
    assert not loaded & CLUSTER_FORBIDDEN, sorted(loaded & CLUSTER_FORBIDDEN)
    assert "http" in loaded  # the framing is the standard library's (http.client), not ktrain's own
    # The console script's start-up makes some 30,000 objects that live until exit: at Python's
    # default pace the collector would walk them ~35 times (3-4 ms, issue #32); ktrain.launcher
    # lets a command of this size run without a collection.
    collections = next(line for line in out.stdout.splitlines() if line.startswith("COLLECTIONS "))
    assert collections == "COLLECTIONS 0", collections


@pytest.mark.double
def test_an_auth_provider_user_is_served_by_the_kubernetes_client(tmp_path: Path) -> None:
    """What only the kubernetes client implements still works: it is imported for such a user."""
    from apiserver import ApiServerDouble

    with ApiServerDouble(tls=True) as srv:
        doc = srv.kubeconfig()
        # a legacy OIDC auth-provider with a current id-token: the client sends it as the bearer token
        doc["users"][0]["user"] = {
            "auth-provider": {"name": "oidc", "config": {"id-token": "not-checked", "idp-issuer-url": "https://x"}}
        }
        kubeconfig = tmp_path / "kubeconfig"
        kubeconfig.write_text(json.dumps(doc))
        code = _console_script("job", "list", "--kubeconfig", str(kubeconfig))
        env = {k: v for k, v in os.environ.items() if k != "KTRAIN_KUBE_CLIENT"}
        loaded = _modules_after(code, env)
        assert srv.requests_for(verb="list", resource="jobsets")
    assert "kubernetes" in loaded


# -- what a cold render and a TAB press may load, module by module (issue #17) ------------------
#
# Their start-up is mostly imports: these pin it. `re` counts too: pip's console-script wrapper
# imports it, but other installers' wrappers (uv's) and `python -m ktrain` do not.


# Standard-library modules neither path imports (each costs 1-5 ms of a cold start on a small VM).
LEAN_FORBIDDEN = {
    "typing",
    "json",
    "re",
    "copy",
    "decimal",
    "base64",
    "hashlib",
    "dataclasses",
    "inspect",
    "pathlib",
    "warnings",
    "weakref",
    "subprocess",
}
NO_CLUSTER = {"KUBECONFIG": os.devnull + "-none", "KTRAIN_NO_FASTPATH": ""}


def test_a_cold_render_loads_no_module_it_does_not_use() -> None:
    """A torch render: no typing, json, re..., no quantity arithmetic (no resources are set), no
    plugin of another framework, no cluster or authoring code, no pydantic model."""
    code = _console_script("job", "render", "--runtime", "torch-distributed", "--nodes", "4", "--", "torchrun", "x")
    _loaded_modules(code, NO_CLUSTER)  # fills the parse cache and the bundled runtimes' index
    loaded = _loaded_modules(code, NO_CLUSTER)
    assert not loaded & LEAN_FORBIDDEN, loaded & LEAN_FORBIDDEN
    unused = {
        "ktrain.engine.quantity",
        "ktrain.service.cluster_runtimes",
        "ktrain.api.runtime",
        "ktrain.api.trainjob",
        *(f"ktrain.engine.plugins.{p}" for p in ("mpi", "flux", "jax", "xgboost", "volcano", "coscheduling")),
    }
    assert not loaded & unused, loaded & unused
    assert not {m for m in loaded if m.startswith(("ktrain.authoring", "ktrain.convert", "ktrain.python_api"))}
    assert {"ktrain.engine.plugins.torch", "ktrain.output.yamltext"} <= loaded  # it did render


def test_a_completion_request_loads_only_the_completer_and_the_cache_reader() -> None:
    """`--runtime <TAB>` once a render has indexed the bundled runtimes: exactly these ktrain modules."""
    _loaded_modules(_console_script("job", "render", "--runtime", "torch-distributed"), NO_CLUSTER)
    loaded = _loaded_modules(_COMPLETION, {**NO_CLUSTER, "_KTRAIN_COMPLETE": "bash"})
    assert not loaded & (LEAN_FORBIDDEN | {"enum", "zipfile", "importlib.metadata"}), loaded & LEAN_FORBIDDEN
    assert {m for m in loaded if m.startswith("ktrain")} == {
        "ktrain",
        "ktrain.launcher",
        "ktrain.completion",
        "ktrain.completion.complete",
        "ktrain.completion.providers",
        "ktrain.completion.request",
        "ktrain.completion.tree",
        "ktrain.completion.values",
        "ktrain.inputs",
        "ktrain.inputs.bundled",
        "ktrain.inputs.parse_cache",
        "ktrain.inputs.reading",
        "ktrain.util",
        "ktrain.util.jsondata",
    }
