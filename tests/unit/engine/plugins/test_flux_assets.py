"""The pure Flux assets: X25519/Z85/CURVE certificate, host list and flags, broker config,
and the two shell scripts (checked with `bash -n` and run against a relocated file tree
with fake `flux`/`hostname` commands)."""

from __future__ import annotations

import ast
import base64
import hashlib
import os
import re
import shutil
import stat
import subprocess
from pathlib import Path

import pytest
import yaml
from conftest import CASES
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey

from ktrain.engine.plugins import flux_assets as fa

BASH = shutil.which("bash")
needs_bash = pytest.mark.skipif(BASH is None, reason="bash is not installed")

# ---------------------------------------------------------------------------------------
# X25519
# ---------------------------------------------------------------------------------------

RFC7748_5_2 = [
    (
        "a546e36bf0527c9d3b16154b82465edd62144c0ac1fc5a18506a2244ba449ac4",
        "e6db6867583030db3594c1a424b15f7c726624ec26b3353b10a903a6d0ab1c4c",
        "c3da55379de9c6908e94ea4df28d084f32eccf03491c71f754b4075577a28552",
    ),
    (
        "4b66e9d4d1b4673c5ad22691957d6af5c11b6421e0ea01d42ca4169e7918ba0d",
        "e5210f12786811d3f4b7959d0538ae2c31dbe7106fc03c3efc4cd549c715a493",
        "95cbde9476e8907d7aade45cb4b873f88b595a68799fa152e6f8f7647aac7957",
    ),
]

ALICE_PRIVATE = "77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a"
ALICE_PUBLIC = "8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a"
BOB_PRIVATE = "5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb"
BOB_PUBLIC = "de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f"
SHARED_SECRET = "4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742"


@pytest.mark.parametrize(("scalar", "u", "expected"), RFC7748_5_2)
def test_x25519_matches_rfc7748_section_5_2_vectors(scalar: str, u: str, expected: str) -> None:
    assert fa.x25519(bytes.fromhex(scalar), bytes.fromhex(u)).hex() == expected


def test_x25519_iterated_rfc7748_vector_after_1_and_1000_rounds() -> None:
    k = u = (9).to_bytes(32, "little")
    after: dict[int, str] = {}
    for round_number in range(1, 1001):
        k, u = fa.x25519(k, u), k
        if round_number in (1, 1000):
            after[round_number] = k.hex()
    assert after == {
        1: "422c8e7a6227d7bca1350b3e2bb7279f7897b87bb6854b783c60e80311ae3079",
        1000: "684cf59ba83309552800ef566f2f4d3c1c3887c49360e3875f2eb94d99532c51",
    }


def test_x25519_public_keys_and_shared_secret_match_rfc7748_section_6_1() -> None:
    assert fa.x25519_public_key(bytes.fromhex(ALICE_PRIVATE)).hex() == ALICE_PUBLIC
    assert fa.x25519_public_key(bytes.fromhex(BOB_PRIVATE)).hex() == BOB_PUBLIC
    assert fa.x25519(bytes.fromhex(ALICE_PRIVATE), bytes.fromhex(BOB_PUBLIC)).hex() == SHARED_SECRET
    assert fa.x25519(bytes.fromhex(BOB_PRIVATE), bytes.fromhex(ALICE_PUBLIC)).hex() == SHARED_SECRET


@pytest.mark.parametrize(
    "private",
    [
        bytes(32),  # clamping turns it into a valid scalar
        b"\xff" * 32,  # every clamped bit set
        *(hashlib.sha256(f"seed-{i}".encode()).digest() for i in range(8)),
    ],
    ids=lambda b: b.hex()[:8],
)
def test_x25519_public_key_agrees_with_cryptography(private: bytes) -> None:
    expected = X25519PrivateKey.from_private_bytes(private).public_key().public_bytes_raw()
    assert fa.x25519_public_key(private) == expected


def test_x25519_ignores_the_top_bit_of_the_u_coordinate() -> None:
    scalar, u, expected = (bytes.fromhex(h) for h in RFC7748_5_2[0])
    high = bytearray(u)
    high[31] |= 0x80
    assert fa.x25519(scalar, bytes(high)) == expected


@pytest.mark.parametrize(("scalar", "u"), [(bytes(31), bytes(32)), (bytes(32), bytes(33))])
def test_x25519_rejects_inputs_that_are_not_32_bytes(scalar: bytes, u: bytes) -> None:
    with pytest.raises(ValueError, match="32 bytes"):
        fa.x25519(scalar, u)


# ---------------------------------------------------------------------------------------
# Z85
# ---------------------------------------------------------------------------------------


def _z85_decode(text: str) -> bytes:
    """Reference decoder straight from the Z85 spec, to check round trips."""
    out = bytearray()
    for i in range(0, len(text), 5):
        value = 0
        for char in text[i : i + 5]:
            value = value * 85 + fa.Z85_ALPHABET.index(char)
        out += value.to_bytes(4, "big")
    return bytes(out)


def test_z85_encodes_the_spec_test_vector() -> None:
    assert fa.z85_encode(bytes([0x86, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B])) == "HelloWorld"


@pytest.mark.parametrize(
    "data", [b"", bytes(4), b"\xff" * 4, bytes(range(32)), hashlib.sha256(b"x").digest()], ids=repr
)
def test_z85_output_decodes_back_to_the_input(data: bytes) -> None:
    encoded = fa.z85_encode(data)
    assert len(encoded) == len(data) // 4 * 5
    assert _z85_decode(encoded) == data


def test_z85_rejects_a_length_that_is_not_a_multiple_of_4() -> None:
    with pytest.raises(ValueError, match="multiple of 4"):
        fa.z85_encode(b"abc")


def test_z85_alphabet_has_85_distinct_characters() -> None:
    assert len(set(fa.Z85_ALPHABET)) == len(fa.Z85_ALPHABET) == 85


# ---------------------------------------------------------------------------------------
# CURVE certificate
# ---------------------------------------------------------------------------------------


def test_curve_certificate_has_the_exact_zeromq_layout() -> None:
    uid = "0b0e2c9a-1d1f-4c3e-9a77-5a0f6d3c2b10"
    secret = hashlib.sha256(uid.encode()).digest()
    public = X25519PrivateKey.from_private_bytes(secret).public_key().public_bytes_raw()
    assert fa.curve_certificate("demo", uid) == (
        "#  ZeroMQ CURVE Secret Certificate\n"
        "#  Generated by Kubeflow Trainer\n"
        "\n"
        "metadata\n"
        '    name = "demo"\n'
        "curve\n"
        f'    public-key = "{fa.z85_encode(public)}"\n'
        f'    secret-key = "{fa.z85_encode(secret)}"\n'
    )


def test_curve_certificate_keys_are_40_characters_and_depend_only_on_the_uid() -> None:
    first = fa.curve_certificate("a", "uid-1")
    keys = re.findall(r'-key = "(.*)"', first)
    assert [len(k) for k in keys] == [40, 40]
    assert re.findall(r'-key = "(.*)"', fa.curve_certificate("b", "uid-1")) == keys
    assert re.findall(r'-key = "(.*)"', fa.curve_certificate("a", "uid-2")) != keys


@pytest.mark.shared
def test_curve_certificate_matches_the_flux_lammps_conformance_secret() -> None:
    case = CASES / "flux-lammps"
    job = yaml.safe_load((case / "trainjob.yaml").read_text())
    secret = next(
        doc for doc in yaml.safe_load_all((case / "expected.yaml").read_text()) if doc and doc.get("kind") == "Secret"
    )
    cert = fa.curve_certificate(job["metadata"]["name"], job["metadata"]["uid"])
    assert base64.b64encode(cert.encode()).decode() == secret["data"]["curve.cert"]


# ---------------------------------------------------------------------------------------
# Ranges, host list, R spec and flags
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("k", "expected"), [(1, "0"), (2, "0-1"), (8, "0-7"), (0, "0--1")])
def test_cpu_range_is_a_single_index_for_one_item_and_a_span_otherwise(k: int, expected: str) -> None:
    assert fa.cpu_range(k) == expected


@pytest.mark.parametrize(("nodes", "expected"), [(1, "tj-node-0-[0]"), (3, "tj-node-0-[0-2]")])
def test_hostlist_names_the_node_pods_of_the_job(nodes: int, expected: str) -> None:
    assert fa.hostlist("tj", nodes) == expected


@pytest.mark.parametrize(
    ("tasks", "gpus", "expected"),
    [(1, 0, "--cores=0"), (4, 0, "--cores=0-3"), (4, 1, "--cores=0-3 --gpu=0"), (2, 8, "--cores=0-1 --gpu=0-7")],
)
def test_rspec_lists_cores_and_gpus_only_when_present(tasks: int, gpus: int, expected: str) -> None:
    assert fa.rspec(tasks, gpus) == expected


@pytest.mark.parametrize(
    ("nodes", "tasks", "gpus", "expected"),
    [(2, 4, 0, "-N 2 -n 8"), (1, 1, 0, "-N 1 -n 1"), (3, 2, 4, "-N 3 -n 6 -g 4")],
)
def test_flux_flags_give_nodes_total_tasks_and_gpus(nodes: int, tasks: int, gpus: int, expected: str) -> None:
    assert fa.flux_flags(nodes, tasks, gpus) == expected


# ---------------------------------------------------------------------------------------
# broker.toml
# ---------------------------------------------------------------------------------------


def test_broker_toml_holds_the_upstream_settings() -> None:
    tomllib = pytest.importorskip("tomllib")
    text = fa.render_broker_toml("tj", "team-a", "tj-node-0-[0-1]", "ens5", "easy")
    assert tomllib.loads(text) == {
        "access": {"allow-guest-user": True, "allow-root-owner": True},
        "resource": {"path": "/mnt/flux/config/etc/flux/system/R"},
        "bootstrap": {
            "curve_cert": "/mnt/flux/config/etc/curve/curve.cert",
            "default_port": 8050,
            "default_bind": "tcp://ens5:%p",
            "default_connect": "tcp://%h.tj.team-a.svc.cluster.local:%p",
            "hosts": [{"host": "tj-node-0-[0-1]"}],
        },
        "archive": {
            "dbpath": "/mnt/flux/config/var/lib/flux/job-archive.sqlite",
            "period": "1m",
            "busytimeout": "50s",
        },
        "sched-fluxion-qmanager": {"queue-policy": "easy"},
    }


def test_templates_take_their_values_in_upstream_order() -> None:
    # The number of `%s` slots is the contract with the callers (and with upstream).
    assert fa.BROKER_TOML_TEMPLATE.count("%s") == 4
    assert fa.INIT_SH_TEMPLATE.count("%s") == 4
    assert fa.ENTRYPOINT_SH_TEMPLATE.count("%s") == 3
    init = fa.render_init_sh("V1", "V2", "V3", "V4")
    assert init.index('view_root="V1"') < init.index('main_host="V2"') < init.index('hosts="V3"')
    assert "\nV4\nKTRAIN_BROKER_TOML\n" in init
    entry = fa.render_entrypoint_sh("E1", "E2", "E3")
    assert entry.index("E1 > /tmp/R") < entry.index('main_host="E2"') < entry.index('flags="E3"')


# ---------------------------------------------------------------------------------------
# Shell scripts
# ---------------------------------------------------------------------------------------


def _render_all(name: str, namespace: str, nodes: int, tasks: int, gpus: int) -> tuple[str, str, str]:
    hosts = fa.hostlist(name, nodes)
    broker = fa.render_broker_toml(name, namespace, hosts, "eth0", "fcfs")
    init = fa.render_init_sh(fa.FLUX_VIEW_PATH, f"{name}-0", hosts, broker)
    entry = fa.render_entrypoint_sh(fa.rspec(tasks, gpus), f"{name}-node-0-0", fa.flux_flags(nodes, tasks, gpus))
    return broker, init, entry


@needs_bash
@pytest.mark.parametrize(("nodes", "tasks", "gpus"), [(1, 1, 0), (2, 4, 0), (4, 2, 8)])
def test_rendered_scripts_are_valid_bash(tmp_path: Path, nodes: int, tasks: int, gpus: int) -> None:
    _, init, entry = _render_all("lammps-flux", "default", nodes, tasks, gpus)
    for name, script in (("init.sh", init), ("entrypoint.sh", entry)):
        path = tmp_path / name
        path.write_text(script)
        result = subprocess.run([BASH, "-n", str(path)], capture_output=True, text=True, check=False)
        assert result.returncode == 0, f"{name}: {result.stderr}"


def test_rendered_scripts_contain_the_substituted_values() -> None:
    broker, init, entry = _render_all("lammps-flux", "ns1", 2, 4, 2)
    assert 'view_root="/opt/view"' in init
    assert 'main_host="lammps-flux-0"' in init
    assert 'hosts="lammps-flux-node-0-[0-1]"' in init
    assert broker in init
    assert "--cores=0-3 --gpu=0-1 > /tmp/R" in entry
    assert 'main_host="lammps-flux-node-0-0"' in entry
    assert 'flags="-N 2 -n 8 -g 2"' in entry


def _relocate(script: str, root: Path) -> str:
    """Point the scripts' absolute paths into `root` so they can run in a sandbox.
    The look-behind keeps e.g. `.../etc/curve/curve.cert` intact."""
    return re.sub(r"(?<![\w}./-])(/mnt/flux|/opt/software|/curve/|/tmp/)", lambda m: f"{root}{m.group(1)}", script)


def _run(script: str, root: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    path = root / "script.sh"
    path.write_text(script)
    assert BASH is not None
    return subprocess.run(
        [BASH, str(path), *args],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, **(env or {})},
    )


@needs_bash
def test_init_script_installs_the_view_and_writes_host_list_and_broker_config(tmp_path: Path) -> None:
    # A spack-style view: /opt/view is a symlink to the real view directory.
    real_view = tmp_path / "opt" / "views" / "._view" / "abc123"
    (real_view / "bin").mkdir(parents=True)
    (real_view / "bin" / "flux").write_text("flux binary")
    (tmp_path / "opt" / "view").symlink_to(real_view)
    (tmp_path / "opt" / "software" / "pkg").mkdir(parents=True)
    (tmp_path / "opt" / "software" / "pkg" / "lib.so").write_text("lib")

    hosts = fa.hostlist("tj", 2)
    # A `$(...)` in a user-set value must reach the file untouched, never run.
    broker = fa.render_broker_toml("tj", "default", hosts, "eth0", "fcfs$(touch injected)")
    # The view path is filled in after relocating: tmp_path itself may sit under /tmp/.
    init = _relocate(fa.render_init_sh("@VIEW@", "tj-0", hosts, broker), tmp_path)
    init = init.replace("@VIEW@", str(tmp_path / "opt" / "view"))
    result = _run(init, tmp_path)

    assert result.returncode == 0, result.stderr
    flux = tmp_path / "mnt" / "flux"
    config = flux / "config"
    assert (flux / "view" / "bin" / "flux").read_text() == "flux binary"
    assert (flux / "software" / "pkg" / "lib.so").read_text() == "lib"
    assert (config / "etc" / "flux" / "system" / "hostlist").read_text() == hosts + "\n"
    # Written byte for byte: `%p`/`%h` and quotes survive the heredoc.
    assert (config / "etc" / "flux" / "config" / "broker.toml").read_text() == _relocate(broker, tmp_path) + "\n"
    for directory in ("run/flux", "etc/curve", "var/lib/flux", "etc/flux/system/cron.d"):
        assert (config / directory).is_dir(), directory
    assert (flux / "flux-operator-done.txt").exists()
    assert not (tmp_path / "injected").exists()


_FAKE_FLUX = """#!/bin/bash
# Records each call as one line of \\x1f-separated arguments.
printf '%s\\x1f' "$@" >> "$FAKE_FLUX_LOG"
printf '\\n' >> "$FAKE_FLUX_LOG"
if [[ "$1" == "R" ]]; then echo '{"R": "fake"}'; fi
exit 0
"""


def _entrypoint_sandbox(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    flux = tmp_path / "mnt" / "flux"
    (flux / "view" / "bin").mkdir(parents=True)
    (flux / "view" / "lib" / "python3.11" / "site-packages").mkdir(parents=True)
    (flux / "view" / "bin" / "python3.11").write_text("python")
    (flux / "view" / "bin" / "python3").write_text("stale link")
    (flux / "software" / "pkg").mkdir(parents=True)
    (flux / "software" / "pkg" / "lib.so").write_text("lib")
    (flux / "config" / "etc" / "flux" / "system").mkdir(parents=True)
    (flux / "config" / "etc" / "flux" / "system" / "hostlist").write_text("tj-node-0-[0-1]\n")
    (flux / "config" / "etc" / "curve").mkdir(parents=True)
    (tmp_path / "opt" / "software").mkdir(parents=True)
    (tmp_path / "curve").mkdir()
    (tmp_path / "curve" / "curve.cert").write_text("CERT")
    (tmp_path / "tmp").mkdir()
    fake_bin = tmp_path / "fakebin"
    fake_bin.mkdir()
    (fake_bin / "flux").write_text(_FAKE_FLUX)
    (fake_bin / "hostname").write_text('#!/bin/bash\necho "$FAKE_HOSTNAME"\n')
    for tool in fake_bin.iterdir():
        tool.chmod(0o755)
    env = {"PATH": f"{fake_bin}:{os.environ['PATH']}", "FAKE_FLUX_LOG": str(tmp_path / "flux.log")}
    return flux, env


def _flux_calls(tmp_path: Path) -> list[list[str]]:
    lines = (tmp_path / "flux.log").read_text().splitlines()
    return [line.split("\x1f")[:-1] for line in lines]


def _broker_options(config: Path) -> list[str]:
    return [
        f"-Scron.directory={config}/etc/flux/system/cron.d",
        "-Stbon.fanout=256",
        f"-Srundir={config}/run/flux",
        f"-Sstatedir={config}/var/lib/flux",
        f"-Slocal-uri=local://{config}/run/flux/local",
        "-Slog-stderr-level=0",
        "-Slog-stderr-mode=local",
    ]


@needs_bash
def test_entrypoint_on_the_lead_pod_encodes_resources_and_runs_the_command(tmp_path: Path) -> None:
    flux, env = _entrypoint_sandbox(tmp_path)
    entry = _relocate(fa.render_entrypoint_sh(fa.rspec(4, 1), "tj-node-0-0", fa.flux_flags(2, 4, 1)), tmp_path)
    result = _run(entry, tmp_path, "lmp -v x 4 -in in.reaxc.hns", env={**env, "FAKE_HOSTNAME": "tj-node-0-0"})

    assert result.returncode == 0, result.stderr
    config = flux / "config"
    assert _flux_calls(tmp_path) == [
        ["R", "encode", "--hosts=tj-node-0-[0-1]", "--cores=0-3", "--gpu=0"],
        [
            "start",
            "-o",
            "--config",
            f"{config}/etc/flux/config",
            *_broker_options(config),
            "flux",
            "run",
            "-N",
            "2",
            "-n",
            "8",
            "-g",
            "1",
            "lmp",
            "-v",
            "x",
            "4",
            "-in",
            "in.reaxc.hns",
        ],
    ]
    assert (config / "etc" / "flux" / "system" / "R").read_text() == '{"R": "fake"}\n'
    cert = config / "etc" / "curve" / "curve.cert"
    assert cert.read_text() == "CERT"
    assert stat.S_IMODE(cert.stat().st_mode) & 0o044 == 0
    assert (tmp_path / "opt" / "software" / "pkg" / "lib.so").read_text() == "lib"
    assert not (flux / "view" / "bin" / "python3").exists()
    assert os.readlink(flux / "view" / "lib" / "python3") == str(flux / "view" / "bin" / "python3.11")
    assert "sched-fluxion-qmanager" in (flux / "load-fluxion.sh").read_text()
    assert f"fluxsocket=local://{config}/run/flux/local" in (flux / "flux-view.sh").read_text()
    assert (flux / "flux-operator-complete.txt").exists()


@needs_bash
def test_entrypoint_on_the_lead_pod_without_a_command_keeps_an_interactive_broker(tmp_path: Path) -> None:
    flux, env = _entrypoint_sandbox(tmp_path)
    entry = _relocate(fa.render_entrypoint_sh(fa.rspec(1, 0), "tj-node-0-0", fa.flux_flags(2, 1, 0)), tmp_path)
    result = _run(entry, tmp_path, "", env={**env, "FAKE_HOSTNAME": "tj-node-0-0"})

    assert result.returncode == 0, result.stderr
    config = flux / "config"
    assert _flux_calls(tmp_path)[1:] == [
        ["broker", "--config-path", f"{config}/etc/flux/config", *_broker_options(config)],
    ]


@needs_bash
def test_entrypoint_on_a_worker_pod_starts_a_follower_broker(tmp_path: Path) -> None:
    flux, env = _entrypoint_sandbox(tmp_path)
    entry = _relocate(fa.render_entrypoint_sh(fa.rspec(1, 0), "tj-node-0-0", fa.flux_flags(2, 1, 0)), tmp_path)
    result = _run(entry, tmp_path, "hostname", env={**env, "FAKE_HOSTNAME": "tj-node-0-1"})

    assert result.returncode == 0, result.stderr
    config = flux / "config"
    assert _flux_calls(tmp_path) == [
        ["R", "encode", "--hosts=tj-node-0-[0-1]", "--cores=0"],
        ["start", "-o", "--config", f"{config}/etc/flux/config", *_broker_options(config)],
    ]


# ---------------------------------------------------------------------------------------
# Purity
# ---------------------------------------------------------------------------------------


def test_module_imports_only_pure_stdlib_modules() -> None:
    tree = ast.parse(Path(fa.__file__).read_text())
    imported: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module.split(".")[0])
    assert imported <= {"__future__", "hashlib", "typing"}
