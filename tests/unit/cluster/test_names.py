"""`ktrain.cluster.names`: namespaces and object names checked with the API server's own rules
(apimachinery's IsDNS1123Label / IsDNS1123Subdomain, in its words) before any request is sent."""

from __future__ import annotations

import pytest

from ktrain.cluster.names import DNS1123_LABEL_MSG, DNS1123_SUBDOMAIN_MSG, InvalidNameError, check_name, check_namespace
from ktrain.errors import ExitCode, UsageError


@pytest.mark.parametrize("namespace", ["default", "team-a", "a", "1-2", "x" * 63])
def test_valid_namespaces_pass_unchanged(namespace: str) -> None:
    assert check_namespace(namespace) == namespace


@pytest.mark.parametrize("name", ["demo", "my.job-1", "a" * 253, "0"])
def test_valid_names_pass_unchanged(name: str) -> None:
    assert check_name(name, "job") == name


def test_a_path_in_a_namespace_is_refused_in_the_servers_words() -> None:
    with pytest.raises(InvalidNameError) as err:
        check_namespace("../../api/v1/namespaces/default/configmaps/victim#")
    assert str(err.value.message) == (
        'invalid namespace "../../api/v1/namespaces/default/configmaps/victim#": ' + DNS1123_LABEL_MSG
    )
    assert err.value.hint == "nothing was sent to the cluster; pass a namespace with -n NAME"
    assert isinstance(err.value, UsageError) and err.value.exit_code == ExitCode.USAGE


@pytest.mark.parametrize("namespace", ["Team_A", "a.b", "-a", "a-", ""])
def test_a_namespace_is_a_label_no_dots_no_capitals(namespace: str) -> None:
    with pytest.raises(InvalidNameError, match="invalid namespace"):
        check_namespace(namespace)


def test_too_long_says_the_limit_and_the_rule_when_both_fail() -> None:
    with pytest.raises(InvalidNameError) as err:
        check_namespace("x" * 64)
    assert err.value.message == f'invalid namespace "{"x" * 64}": must be no more than 63 characters'
    with pytest.raises(InvalidNameError) as both:
        check_name("X" * 254, "job")
    assert both.value.message == (
        f'invalid job name "{"X" * 254}": must be no more than 253 characters; ' + DNS1123_SUBDOMAIN_MSG
    )


@pytest.mark.parametrize("name", ["../x", "a/b", "demo#", "Demo", "a..b", "a b", "a\nb"])
def test_a_name_is_a_subdomain(name: str) -> None:
    with pytest.raises(InvalidNameError, match="invalid job name") as err:
        check_name(name, "job")
    assert err.value.hint == "nothing was sent to the cluster"
    assert "\n" not in str(err.value.message)  # quoted as the server's %q: a newline is shown escaped


def test_a_namespace_object_name_is_held_to_the_label_rule() -> None:
    assert check_name("a.b", "ConfigMap") == "a.b"
    with pytest.raises(InvalidNameError, match=r'invalid Namespace name "a\.b"'):
        check_name("a.b", "Namespace")
