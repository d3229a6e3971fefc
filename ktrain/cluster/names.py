"""Namespaces and object names as the API server checks them, before any request is sent.

Every request path (`ktrain.cluster.client`) is built from a namespace and a name checked with the
API server's own rules (k8s.io/apimachinery/pkg/util/validation: IsDNS1123Label for namespaces,
IsDNS1123Subdomain for object names, in the server's words), each segment percent-encoded. A name
such as `../../api/v1/namespaces/x/configmaps/y#` therefore never reaches the wire.
`ktrain.cluster.kube` checks the namespace when it connects; both import this module.
"""

from __future__ import annotations

from ktrain.errors import UsageError
from ktrain.util.dnsnames import is_dns1123_label, is_dns1123_subdomain
from ktrain.util.jsondata import dumps

_DNS1123_LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN = _DNS1123_LABEL + "(\\." + _DNS1123_LABEL + ")*"
DNS1123_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "
    "and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
    f"'{_DNS1123_LABEL}')"
)
DNS1123_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    f"'{_DNS1123_SUBDOMAIN}')"
)


class InvalidNameError(UsageError):
    """A namespace or name that cannot be part of a request path; nothing was sent."""


def _name_problems(value: str, *, label: bool) -> list[str]:
    limit, valid, message = (
        (63, is_dns1123_label, DNS1123_LABEL_MSG) if label else (253, is_dns1123_subdomain, DNS1123_SUBDOMAIN_MSG)
    )
    problems = []
    if len(value) > limit:
        problems.append(f"must be no more than {limit} characters")
    if not valid(value):
        problems.append(message)
    return problems


def _show(value: str) -> str:
    return dumps(value)  # as the server's %q


def check_namespace(namespace: str) -> str:
    """`namespace`, or InvalidNameError in the API server's words (a DNS-1123 label)."""
    problems = _name_problems(str(namespace), label=True)
    if problems:
        raise InvalidNameError(
            f"invalid namespace {_show(str(namespace))}: " + "; ".join(problems),
            hint="nothing was sent to the cluster; pass a namespace with -n NAME",
        )
    return namespace


def check_name(name: str, kind: str = "object") -> str:
    """`name`, or InvalidNameError in the API server's words (a DNS-1123 subdomain, the rule of
    ktrain's kinds: CRDs' objects, ConfigMaps, Secrets and Pods)."""
    problems = _name_problems(str(name), label=kind == "Namespace")
    if problems:
        raise InvalidNameError(
            f"invalid {kind} name {_show(str(name))}: " + "; ".join(problems), hint="nothing was sent to the cluster"
        )
    return name
