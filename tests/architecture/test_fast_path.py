"""The fast path is declared once (ktrain/util/fastpath.py), and its start-up idioms stay on it.

What the fast commands load, measured in fresh interpreters, must be declared: a module that moves
onto the path is declared, or the commands get slower without anyone deciding it. Outside the
declaration a module is ordinary Python (docs/architecture.md, "The fast path"): no
`TYPE_CHECKING = False`, no `@struct`, no alias of its own for a JSON object.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ktrain.util.fastpath import FAST_MODULES, FAST_PACKAGES, NOT_FAST, is_fast_path

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "architecture.md"
POINTER = 'docs/architecture.md, "The fast path"'


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted((REPO / "ktrain").rglob("*.py")):
        parts = list(path.relative_to(REPO).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _console(*argv: str) -> str:
    return (
        f"import sys\nsys.argv = ['ktrain', *{list(argv)!r}]\nfrom ktrain.launcher import run\ntry:\n"
        "    run()\nexcept SystemExit:\n    pass"
    )


def _ktrain_modules(code: str, env: dict[str, str]) -> set[str]:
    """The ktrain modules in sys.modules after `code` ran in a fresh interpreter (twice: the first
    run fills the runtime parse cache, as a user's earlier commands would have)."""
    probe = code + "\nimport sys\nprint('MODULES', ' '.join(sorted(sys.modules)))\n"
    for _ in range(2):
        out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env)
    line = next((x for x in out.stdout.splitlines() if x.startswith("MODULES ")), "")
    assert line, out.stderr[-2000:]
    return {m for m in line.split()[1:] if m.split(".")[0] == "ktrain"}


_COMPLETION = (
    "import os, sys\nsys.argv = ['ktrain', 'ktrain job render --runtime ']\nfrom ktrain.launcher import run\n"
    "def _exit(code):\n    raise SystemExit(code)\nos._exit = _exit\ntry:\n    run()\nexcept SystemExit:\n    pass"
)
_RESOURCE_LIST = (
    "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: trainer.kubeflow.org/v1alpha1\n"
    "  kind: TrainJob\n  metadata: {name: t}\n  spec: {runtimeRef: {name: torch-distributed}, trainer: {numNodes: 2}}\n"
)
_JOB_FILE = "kind: TrainJob\nspec:\n  runtimeRef: {name: torch-distributed}\n"


def _local_probes() -> dict[str, tuple[str, dict[str, str]]]:
    """The fast commands that need no cluster: what tests/architecture/test_imports.py pins."""
    env = {**os.environ, "KTRAIN_NO_FASTPATH": "", "KUBECONFIG": os.devnull + "-none"}
    probes = {}
    for runtime in sorted(p.stem for p in (REPO / "runtimes").glob("*.yaml")):
        argv = ("job", "render", "--runtime", runtime, "--nodes", "2", "--", "python", "train.py")
        probes[f"render {runtime}"] = (_console(*argv), env)
    argv = ("render", "--runtime", "deepspeed-distributed", "--ssh-secret", "k", "-e", "A=1", "--set", "suspend=true")
    probes["render -o json --set"] = (_console(*argv, "-o", "json"), env)
    probes["render -f"] = (
        f"import io, sys\nsys.stdin = io.StringIO({_JOB_FILE!r})\n" + _console("render", "-f", "-", "-o", "name"),
        env,
    )
    for argv in [
        ("--help",),
        (),
        ("job",),
        ("job", "create", "--help"),
        ("render", "-h"),
        ("completion", "install", "--help"),
        ("runtime", "list"),
        ("runtime", "list", "-o", "wide"),
        ("runtime", "show", "torch-distributed", "--source", "local"),
        ("job", "init", "-r", "torch-distributed"),
        ("job", "validate", "--runtime", "torch-distributed", "--nodes", "2"),
    ]:
        probes[" ".join(argv) or "ktrain"] = (_console(*argv), env)
    probes["completion"] = (_COMPLETION, {**env, "_KTRAIN_COMPLETE": "bash"})
    kubectl = _COMPLETION.replace(
        "['ktrain', 'ktrain job render --runtime ']", "['kubectl_complete-ktrain', 'job', 'render', '--runtime', '']"
    ).replace("ktrain.launcher", "ktrain.completion.kubectl")
    probes["kubectl completion"] = (kubectl, env)
    probes["ktrain-krm"] = (
        f"import io, sys\nsys.stdin = io.StringIO({_RESOURCE_LIST!r})\nsys.stdout = io.StringIO()\n"
        "from ktrain.cli.krm import main\nmain([])\nsys.stdout = sys.__stdout__",
        env,
    )
    return probes


CLUSTER_COMMANDS = [
    ("job", "list", "-o", "wide"),
    ("job", "get", "seen"),
    ("job", "why", "seen"),
    ("job", "logs", "seen"),
    ("job", "wait", "seen", "--for", "running", "--timeout", "5s"),
    ("job", "create", "-r", "torch-distributed", "--name", "made"),
    ("job", "delete", "seen", "--yes"),
]


def _cluster_loads(tmp_path: Path) -> dict[str, set[str]]:
    """The cluster commands against the API-server double, over HTTPS with a client certificate
    (the transport that loads the most: ssl, the credentials)."""
    from apiserver import ApiServerDouble
    from apiserver.seeding import seed_running_job

    loads = {}
    with ApiServerDouble(token="t0k3n", tls=True) as srv:
        kubeconfig = seed_running_job(srv, tmp_path)
        env = {**os.environ, "KTRAIN_NO_FASTPATH": ""}
        env.pop("KTRAIN_KUBE_CLIENT", None)
        for argv in CLUSTER_COMMANDS:
            loads[" ".join(argv[:2])] = _ktrain_modules(_console(*argv, "--kubeconfig", str(kubeconfig)), env)
        assert srv.requests_for(verb="delete", resource="jobsets"), "the probes never reached the cluster"
    return loads


@pytest.fixture(scope="module")
def local_loads() -> dict[str, set[str]]:
    return {name: _ktrain_modules(code, env) for name, (code, env) in _local_probes().items()}


def _undeclared(loads: dict[str, set[str]]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for name, loaded in loads.items():
        for module in sorted(m for m in loaded if not is_fast_path(m)):
            out.setdefault(module, []).append(name)
    return out


def test_every_module_the_local_fast_commands_load_is_declared(local_loads: dict[str, set[str]]) -> None:
    assert not _undeclared(local_loads), (
        "loaded on the fast path but not declared in ktrain/util/fastpath.py (declare it, or keep it off the path): "
        f"{_undeclared(local_loads)}"
    )


@pytest.mark.double
def test_every_module_the_cluster_commands_load_is_declared(local_loads: dict[str, set[str]], tmp_path: Path) -> None:
    cluster = _cluster_loads(tmp_path)
    assert not _undeclared(cluster), (
        f"loaded by a cluster command but not declared in ktrain/util/fastpath.py: {_undeclared(cluster)}"
    )
    # and each entry of the declaration is needed: some fast command loads it
    loaded = set().union(*local_loads.values(), *cluster.values())
    for package in FAST_PACKAGES:
        assert package in MODULES, f"ktrain/util/fastpath.py names {package}, which does not exist"
        assert any(m == package or m.startswith(package + ".") for m in loaded), f"no fast command loads {package}"
    for module in FAST_MODULES:
        assert module in loaded, f"no fast command loads {module}: take it out of FAST_MODULES"
    for module in NOT_FAST:
        assert module in MODULES, f"ktrain/util/fastpath.py names {module}, which does not exist"
        assert module not in loaded, f"{module} is loaded by a fast command: take it out of NOT_FAST"


# -- the idioms -------------------------------------------------------------------------------------------


def _flag_lines(tree: ast.Module) -> list[int]:
    """Lines of module-level `TYPE_CHECKING = False` (typing's constant, without importing typing)."""
    return [
        n.lineno
        for n in tree.body
        if isinstance(n, ast.Assign)
        and [getattr(t, "id", None) for t in n.targets] == ["TYPE_CHECKING"]
        and isinstance(n.value, ast.Constant)
        and n.value.value is False
    ]


def _struct_uses(tree: ast.Module) -> list[int]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "ktrain.util.structs":
            found += [node.lineno for a in node.names if a.name in ("struct", "field")]
        if isinstance(node, ast.ClassDef):
            for dec in node.decorator_list:
                target = dec.func if isinstance(dec, ast.Call) else dec
                if isinstance(target, (ast.Name, ast.Attribute)) and getattr(
                    target, "id", getattr(target, "attr", "")
                ) == ("struct"):
                    found.append(dec.lineno)
    return found


def _obj_aliases(tree: ast.Module) -> list[int]:
    """`Obj = dict[str, Any]` (or any other definition of the name Obj) at module level or under
    `if TYPE_CHECKING:`."""
    body = list(tree.body)
    for node in tree.body:
        if isinstance(node, ast.If):
            body += node.body + node.orelse
    return [
        n.lineno
        for n in body
        if (isinstance(n, ast.Assign) and any(getattr(t, "id", None) == "Obj" for t in n.targets))
        or (isinstance(n, ast.AnnAssign) and getattr(n.target, "id", None) == "Obj")
        or (type(n).__name__ == "TypeAlias" and getattr(getattr(n, "name", None), "id", None) == "Obj")
    ]


def test_modules_off_the_fast_path_are_ordinary_python() -> None:
    """typing's TYPE_CHECKING, dataclasses, and the shared alias: no start-up idiom without a reason."""
    offenders = []
    for module, path in MODULES.items():
        if is_fast_path(module):
            continue
        tree = ast.parse(path.read_text())
        offenders += [f"{module}:{line}: TYPE_CHECKING = False" for line in _flag_lines(tree)]
        offenders += [f"{module}:{line}: @struct (use @dataclass)" for line in _struct_uses(tree)]
    assert not offenders, offenders


def test_one_alias_for_a_json_object() -> None:
    """`ktrain.util.jsondata.Obj` is the one definition; modules import it."""
    defined = {m: _obj_aliases(ast.parse(p.read_text())) for m, p in MODULES.items()}
    assert {m: lines for m, lines in defined.items() if lines} == {
        "ktrain.util.jsondata": defined["ktrain.util.jsondata"]
    }
    assert len(defined["ktrain.util.jsondata"]) == 1


def test_the_idioms_point_to_their_reason_instead_of_repeating_it() -> None:
    """Each `TYPE_CHECKING = False` on the fast path points to the one section that explains it,
    which says where the declaration is; no module carries its own copy of the explanation."""
    doc = DOC.read_text()
    section = doc.split("\n## The fast path\n", 1)
    assert len(section) == 2, "docs/architecture.md has no section '## The fast path'"
    body = section[1].split("\n## ", 1)[0]
    assert "ktrain/util/fastpath.py" in body and "tests/architecture/test_fast_path.py" in body
    for module, path in MODULES.items():
        text = path.read_text()
        assert not re.search(r"#\s*typing costs", text), f"{module}: a copy of the reason (point to the docs instead)"
        lines = text.splitlines()
        for line in _flag_lines(ast.parse(text)):
            assert POINTER in lines[line - 1], f"{module}:{line}: TYPE_CHECKING = False without the pointer to the docs"
