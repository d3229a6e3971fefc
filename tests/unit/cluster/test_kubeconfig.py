"""`ktrain.cluster.kubeconfig`: the files of $KUBECONFIG merged by clientcmd's rules (the first file to
define a name wins it), and the shape cache: a warm read gives exactly what PyYAML parses, without
importing it, and the cache holds no value of the file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ktrain.cluster import kubeconfig
from ktrain.cluster.kubeconfig import Merged
from ktrain.errors import UsageError
from ktrain.inputs import parse_cache

from .kubeconfigs import TOKEN, write

SECRET = "eyJhbGciOiJSUzI1NiJ9.c2VjcmV0LXRva2Vu.sig"


def entry_of(path: Path) -> Path:
    return Path(kubeconfig._entry_path(str(path)))


def sample(token: str = SECRET) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": "prod",
                "cluster": {
                    "server": "https://10.0.0.1:6443",
                    "certificate-authority-data": "LS0tLS1CRUdJTg==",
                    "insecure-skip-tls-verify": False,
                },
            }
        ],
        "users": [
            {"name": "alice", "user": {"token": token}},
            {
                "name": "eks",
                "user": {
                    "exec": {
                        "apiVersion": "client.authentication.k8s.io/v1beta1",
                        "command": "aws",
                        "args": ["eks", "get-token", "--cluster-name", "prod"],
                        "env": None,
                        "provideClusterInfo": False,
                    }
                },
            },
        ],
        "contexts": [{"name": "prod", "context": {"cluster": "prod", "user": "alice", "namespace": "team-a"}}],
        "current-context": "prod",
        "preferences": {},
    }


def test_a_warm_read_gives_what_pyyaml_parsed_and_the_cache_holds_no_value(tmp_path: Path) -> None:
    path = tmp_path / "config"
    path.write_text(yaml.safe_dump(sample()))
    assert kubeconfig._parse(str(path)) == sample()  # cold: parsed, shape stored
    stored = entry_of(path).read_bytes()
    for value in (SECRET, "LS0tLS1CRUdJTg==", "https://10.0.0.1:6443", "alice", "team-a", "get-token"):
        assert value.encode() not in stored
    found, data = kubeconfig._cached(str(path), path.read_text())
    assert found and data == sample()


def test_a_warm_command_does_not_import_a_yaml_parser(tmp_path: Path) -> None:
    path = tmp_path / "config"
    path.write_text(yaml.safe_dump(sample()))
    code = (
        "import sys\nfrom ktrain.cluster.kubeconfig import Merged\n"
        f"print(Merged([{str(path)!r}]).select(None).user == {{'token': {SECRET!r}}})\n"
        "print('yaml' in sys.modules)\n"
    )
    env = {**os.environ}
    first = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    second = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert first.stdout.split() == ["True", "True"]
    assert second.stdout.split() == ["True", "False"]


def test_an_edited_file_is_parsed_again(tmp_path: Path) -> None:
    path = tmp_path / "config"
    path.write_text(yaml.safe_dump(sample()))
    kubeconfig._parse(str(path))
    edited = sample(token="rotated-token")
    path.write_text(yaml.safe_dump(edited))  # same path, maybe the same size and mtime
    assert kubeconfig._parse(str(path)) == edited


def test_what_cannot_be_cut_from_the_text_is_not_cached(tmp_path: Path) -> None:
    path = tmp_path / "config"
    path.write_text('apiVersion: v1\nusers:\n- name: "with\\ttab"\n  user: {token: "a\\nb"}\n')
    assert kubeconfig._parse(str(path)) == yaml.safe_load(path.read_text())
    assert not entry_of(path).exists()


def test_a_tampered_entry_is_not_trusted(tmp_path: Path) -> None:
    path = tmp_path / "config"
    path.write_text(yaml.safe_dump(sample()))
    kubeconfig._parse(str(path))
    entry = entry_of(path)
    raw = entry.read_bytes()
    header, _, body = raw.partition(b"\n")
    value = json.loads(body)
    value["skeleton"] = ["v", None]
    entry.write_bytes(header + b"\n" + json.dumps(value).encode())  # the entry's own checksum no longer matches
    assert kubeconfig._cached(str(path), path.read_text()) == (False, None)


scalars = st.one_of(
    st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=30),
    st.sampled_from(
        ["yes", "no", "on", "off", "null", "~", "1e3", "0777", "12:30", "true", "0x1F", "-", "'", '"', "#", ": x"]
    ),
    st.integers(min_value=-(2**40), max_value=2**40),
    st.booleans(),
    st.none(),
)
documents = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(st.text(max_size=12), children, max_size=4)
    ),
    max_leaves=25,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(documents, st.sampled_from([None, "'", '"']), st.booleans(), st.integers(min_value=20, max_value=200))
def test_a_cached_read_equals_pyyamls_for_any_document(
    tmp_path: Path, document: Any, style: str | None, flow: bool, width: int
) -> None:
    path = tmp_path / "fuzz"
    path.write_text(
        yaml.safe_dump(document, default_style=style, default_flow_style=flow, width=width, allow_unicode=True)
    )
    expected = yaml.safe_load(path.read_text())
    assert kubeconfig._parse(str(path)) == expected
    found, data = kubeconfig._cached(str(path), path.read_text())
    if found:
        assert data == expected
    entry = entry_of(path)
    if entry.exists():
        entry.unlink()
    assert parse_cache.cache_dir()


# --- kubeconfig merging (clientcmd's rules) ----------------------------------------------------


def config(name: str, server: str, *, current: str | None = None, namespace: str | None = None) -> dict[str, Any]:
    context: dict[str, Any] = {"cluster": name, "user": name}
    if namespace:
        context["namespace"] = namespace
    doc: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": name, "cluster": {"server": server, "certificate-authority": "ca.pem"}}],
        "users": [{"name": name, "user": {"token": f"token-of-{server}"}}],
        "contexts": [{"name": name, "context": context}],
    }
    if current:
        doc["current-context"] = current
    return doc


def test_the_first_file_to_define_a_name_wins_it_whole(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = write(tmp_path / "a" / "config", config("shared", "https://first"))
    second = write(tmp_path / "b" / "config", config("shared", "https://second", current="shared", namespace="x"))
    selected = Merged([str(first), str(second)]).select(None)  # current-context from the second file
    assert selected.cluster["server"] == "https://first"
    assert selected.cluster["certificate-authority"] == str(tmp_path / "a" / "ca.pem")
    assert selected.user == {"token": "token-of-https://first"}
    assert selected.namespace is None  # the first file's context, which sets no namespace


def test_current_context_comes_from_the_first_file_that_sets_one(tmp_path: Path) -> None:
    one = write(tmp_path / "one", config("one", "https://one"))
    two = write(tmp_path / "two", config("two", "https://two", current="two"))
    three = write(tmp_path / "three", config("three", "https://three", current="three"))
    assert Merged([str(one), str(two), str(three)]).select(None).context == "two"


def test_a_context_naming_an_undefined_cluster_or_user_says_which(tmp_path: Path) -> None:
    doc = config("c", "https://c", current="c")
    doc["contexts"][0]["context"]["user"] = "ghost"
    with pytest.raises(UsageError, match="context 'c' uses user 'ghost', which the kubeconfig does not define"):
        Merged([str(write(tmp_path / "kc", doc))]).select(None)
    doc["contexts"][0]["context"]["cluster"] = "nowhere"
    with pytest.raises(UsageError, match="uses cluster 'nowhere'"):
        Merged([str(write(tmp_path / "kc", doc))]).select(None)


def test_a_broken_kubeconfig_names_the_line_and_quotes_no_value(tmp_path: Path) -> None:
    path = tmp_path / "kc"
    path.write_text(f"apiVersion: v1\nusers:\n- name: u\n  user:\n    token: {TOKEN}\n   bad: [\n")
    with pytest.raises(UsageError, match=rf"cannot read kubeconfig {path}:\d+") as info:
        Merged([str(path)])
    assert TOKEN not in str(info.value)
