"""`ktrain.inputs.kubeconfig_rules`: a kubeconfig checked as client-go checks it (its decoder, then
clientcmd.ConfirmUsable and transport.TLSConfigFor), in messages that name the file, the entry and
the field, never a value. The same rules across both transports and kubectl:
tests/unit/cluster/test_kubeconfig_contract.py."""

from __future__ import annotations

from typing import Any

import pytest

from ktrain.errors import UsageError
from ktrain.inputs.kubeconfig_rules import INSECURE_WITH_CA, check_entries, check_usable, proxy_problem

SECRET = "c2VjcmV0LXZhbHVl"  # base64 of a secret: never quoted


def entries(**user: Any) -> list[Any]:
    return [{"name": "u", "user": user}]


def test_well_typed_entries_pass() -> None:
    check_entries("kc", "users", "user", entries(token=SECRET, **{"as-groups": ["a"], "client-key-data": SECRET}))
    check_entries("kc", "users", "user", entries(token=None))  # null decodes to the zero value
    check_entries("kc", "users", "user", entries(unknown=5))  # unknown fields are passed over, as client-go does
    check_entries("kc", "clusters", "cluster", [{"name": "c", "cluster": {"insecure-skip-tls-verify": True}}])


@pytest.mark.parametrize(
    "field, value, kind",
    [
        ("as-groups", 5, "a list of strings"),
        ("token", ["x"], "a string"),
        ("as-user-extra", {"scopes": "a"}, "a map of string lists"),
        ("exec", "kube-login", "a map"),
    ],
)
def test_a_field_of_the_wrong_type_names_the_field_and_its_type(field: str, value: Any, kind: str) -> None:
    with pytest.raises(UsageError) as err:
        check_entries("/home/me/.kube/config", "users", "user", entries(**{field: value}))
    assert err.value.message == f"cannot read kubeconfig /home/me/.kube/config: `{field}` of user 'u' must be {kind}"


def test_a_boolean_written_as_a_string_is_refused() -> None:
    with pytest.raises(UsageError, match="`insecure-skip-tls-verify` of cluster 'c' must be true or false"):
        check_entries("kc", "clusters", "cluster", [{"name": "c", "cluster": {"insecure-skip-tls-verify": "yes"}}])


def test_data_that_is_not_base64_is_refused_without_quoting_it() -> None:
    check_entries("kc", "users", "user", entries(**{"client-key-data": SECRET[:8] + "\n" + SECRET[8:]}))  # wrapped
    with pytest.raises(UsageError) as err:
        check_entries("kc", "users", "user", entries(**{"client-key-data": "not base64!" + SECRET}))
    assert err.value.message == "cannot read kubeconfig kc: `client-key-data` of user 'u' is not valid base64"
    assert SECRET not in str(err.value) + str(err.value.hint)


def test_a_name_twice_in_one_list_is_refused_as_kubectl_does() -> None:
    with pytest.raises(UsageError, match="cannot read kubeconfig kc: duplicate name 'c' in `contexts`") as err:
        check_entries("kc", "contexts", "context", [{"name": "c", "context": {}}, {"name": "c", "context": {}}])
    assert "kubectl refuses the file too" in (err.value.hint or "")


def test_insecure_beside_a_ca_is_refused_with_client_gos_words() -> None:
    with pytest.raises(UsageError, match=f"cluster 'c': {INSECURE_WITH_CA}"):
        check_usable("c", {"insecure-skip-tls-verify": True, "certificate-authority-data": SECRET}, "u", {})
    check_usable("c", {"insecure-skip-tls-verify": True}, "u", {})


@pytest.mark.parametrize(
    "user, message",
    [
        ({"as-groups": ["g"]}, "requesting uid, groups or user-extra for 'u' without impersonating a user"),
        ({"client-certificate-data": SECRET}, "client-key-data or client-key must be specified for 'u'"),
        (
            {"exec": {"command": "login"}, "auth-provider": {"name": "oidc"}},
            "authProvider cannot be provided in combination with an exec plugin",
        ),
    ],
)
def test_users_clientcmd_finds_unusable(user: Any, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        check_usable("c", {}, "u", user)


@pytest.mark.parametrize(
    "proxy, problem",
    [
        ("http://proxy:3128", None),
        ("socks5://127.0.0.1:1080", None),
        ("https://user:pw@proxy", None),
        ("ftp://proxy", 'unsupported scheme "ftp", must be http, https, or socks5'),
        ("http://proxy:port", "could not parse it as a URL"),
        ("http://", "it names no host"),
    ],
)
def test_proxy_urls_as_client_go_parses_them(proxy: str, problem: str | None) -> None:
    assert proxy_problem(proxy) == problem


def test_a_bad_proxy_names_the_cluster_not_the_url() -> None:
    with pytest.raises(UsageError) as err:
        check_usable("c", {"proxy-url": "ftp://alice:s3cret@proxy"}, "u", {})
    assert err.value.message == (
        "invalid 'proxy-url' for cluster 'c': unsupported scheme \"ftp\", must be http, https, or socks5"
    )
    assert "s3cret" not in err.value.message
