"""Which of detect-secrets' findings `--code` refuses: real secrets, not the words around them.

detect-secrets' generic detectors (a secret-sounding name given a value, a high-entropy string,
a password in a URL) fire on ordinary code and manifests: `secretName: my-secret` in every
Kubernetes manifest, `API_KEY_HEADER = "X-API-KEY"`, a pinned `revision="<commit sha>"`, a model
name in quotes, `https://user:pass@host` in a docstring. Measured on ktrain itself and on
transformers, datasets, accelerate, skypilot and kubeflow, none of the findings they gave was a
secret. These are detect-secrets filters (ktrain.inputs.code_secrets.FILTERS names them), so its
own `scan_file` applies them the same way:

- A known format (AWS, GitHub, GitLab, OpenAI, Slack, Stripe, SendGrid, PyPI, npm, JWT, ...) is
  always refused, whatever the line looks like (`client = OpenAI(api_key="sk-...")`).
- A private key is refused when key material follows its BEGIN line; a header alone (code that
  builds or parses PEM text) is not a key.
- A secret keyword (`password = "..."`, `api_key: ...`) is refused unless its value is a reference
  or a placeholder: the key names a reference (`secretName`, `secretKeyRef`, `imagePullSecrets`,
  `password_file`, `api_key_env`, `SECRET_TYPE`, ...), the value is an expression
  (`os.environ[...]`, `get_secret()`), spells a secret word or a placeholder (`"MITHRIL_API_KEY"`,
  `"X-API-KEY"`, `"test-password"`, `"your-api-key"`, `"changeme"`), or is shorter than 6.
- A high-entropy string is refused when it is named as a credential: the key it is given to holds
  a secret word (`HF_TOKEN = "..."`, `login(key="...")`, `"api_key": "..."`); digests, commit
  SHAs, model names and base64 fixtures are data.
- A password in a URL is refused unless it is a placeholder (`user:pass@`, `user:password@`) or
  the host is reserved for examples (example.com, `*.example`, `*.test`, `*.invalid`).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

# Words that name a credential (identifiers are split into words: `HF_TOKEN` -> hf, token).
SECRET_WORDS = frozenset(
    {
        "password",
        "passwords",
        "passwd",
        "pwd",
        "pw",
        "pass",
        "passphrase",
        "secret",
        "secrets",
        "token",
        "tokens",
        "key",
        "keys",
        "apikey",
        "authkey",
        "privatekey",
        "secretkey",
        "accesskey",
        "authtoken",
        "auth",
        "credential",
        "credentials",
        "cred",
        "creds",
        "private",
        "bearer",
    }
)
# A key whose words go on past the secret word with one of these names a reference to a secret,
# not the secret: secretName, secretKeyRef, password_file, api_key_env, SECRET_TYPE, ...
REFERENCE_WORDS = frozenset(
    {
        "name",
        "names",
        "ref",
        "refs",
        "reference",
        "file",
        "files",
        "path",
        "paths",
        "dir",
        "env",
        "var",
        "vars",
        "variable",
        "header",
        "type",
        "kind",
        "field",
        "source",
        "volume",
        "projection",
        "mount",
        "provider",
        "class",
        "selector",
        "label",
        "prefix",
        "suffix",
        "length",
        "len",
        "size",
        "url",
        "uri",
        "arn",
        "version",
        "policy",
        "mode",
        "store",
        "manager",
        "backend",
        "format",
        "pattern",
        "regex",
        "prompt",
        "message",
        "msg",
        "help",
        "description",
        "title",
        "option",
        "namespace",
        "location",
    }
)
# Kubernetes and Helm fields that hold the name of a Secret (their words end with the secret word).
REFERENCE_KEYS = frozenset({"imagepullsecrets", "existingsecret", "secrets"})
PLACEHOLDER_WORDS = frozenset(
    {
        "example",
        "sample",
        "dummy",
        "fake",
        "test",
        "testing",
        "placeholder",
        "changeme",
        "change",
        "redacted",
        "your",
        "todo",
        "fixme",
        "none",
        "null",
        "undefined",
        "foo",
        "bar",
        "baz",
        "value",
        "xxx",
        "replace",
    }
)
MIN_KEYWORD_VALUE = 6  # a shorter "password" is a placeholder, a flag or a name
# Domains reserved for documentation and tests (RFC 2606, RFC 6761): no credential works there.
EXAMPLE_HOSTS = ("example.com", "example.net", "example.org")
EXAMPLE_SUFFIXES = (".example", ".test", ".invalid", ".example.com", ".example.net", ".example.org")
KEY_MATERIAL = re.compile(r"[A-Za-z0-9+/=]{40,}")  # a base64 line of a PEM body
_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_EXPRESSION = re.compile(r"[\w.\-]+[\[(]")  # get_secret(), os.environ["X"], config["k"]
_OPERATOR = re.compile(r"(?:===?|!==?|:=|=>|::|[=:(])[ \t]*$")
_KEY = re.compile(r"[\w.\-$]+$")
_AFTER = re.compile(r"[\"'`]?\s*[!=]{2,3}\s*([\w.\-]+)")  # "value" == key


def words(text: str) -> list[str]:
    """`text`'s words, lower case: `imagePullSecrets` -> image, pull, secrets; `X-API-KEY` -> x, api, key."""
    return [w.lower() for w in _WORDS.findall(text)]


def key_of(secret: str, line: str, at: int | None = None) -> str:
    """The name `line` gives `secret` (the occurrence at `at`, else the first): the identifier (or
    quoted key) before the `=`, `:`, `(`... that precedes it (`os.environ["HF_TOKEN"] = "..."` ->
    HF_TOKEN; `login(key="...")` -> key), or after a comparison (`"..." == password`); "" when
    there is none (a list item)."""
    at = line.find(secret) if at is None else at
    if at < 0:
        return ""
    before = line[:at].rstrip(" \t\"'`@")
    operator = _OPERATOR.search(before)
    if operator is None:
        after = _AFTER.match(line[at + len(secret) :])
        return after.group(1) if after else ""
    before = before[: operator.start()].rstrip(" \t\"'`])[0123456789")
    key = _KEY.search(before)
    return key.group(0) if key else ""


def _names_a_reference(key_words: list[str]) -> bool:
    if "".join(key_words) in REFERENCE_KEYS:
        return True
    for i, word in enumerate(key_words):
        if word in SECRET_WORDS and any(w in REFERENCE_WORDS for w in key_words[i + 1 :]):
            return True
    return False


def _is_placeholder(value: str) -> bool:
    """A value that spells a secret word (`MITHRIL_API_KEY`, `supersecret`) or a placeholder
    (`your-api-key`, `changeme`, `sk-...`), or repeats one character (`****`)."""
    lowered = value.lower()
    return (
        bool(set(words(value)) & (SECRET_WORDS | PLACEHOLDER_WORDS))
        or any(word in lowered for word in ("secret", "password", "passwd", "...", "\u2026"))
        or len(set(lowered)) <= 1
    )


def _keyword_is_not_a_secret(secret: str, line: str) -> bool:
    if len(secret) < MIN_KEYWORD_VALUE or _EXPRESSION.match(secret) or _is_placeholder(secret):
        return True
    # the value may stand more than once on the line (`a="X", secretRef="X"`): the keys holding a
    # secret word are the ones detect-secrets matched
    keys = [words(key_of(secret, line, at)) for at in _occurrences(secret, line)]
    named = [k for k in keys if set(k) & SECRET_WORDS] or keys
    return bool(named) and all(_names_a_reference(k) for k in named)


def _occurrences(secret: str, line: str) -> list[int]:
    """Where `secret` stands in `line`."""
    starts, at = [], line.find(secret)
    while at >= 0:
        starts.append(at)
        at = line.find(secret, at + 1)
    return starts


def _string_is_unnamed(secret: str, line: str) -> bool:
    return not set(words(key_of(secret, line))) & SECRET_WORDS


def _url_is_an_example(secret: str, line: str) -> bool:
    if _is_placeholder(secret):
        return True
    at = line.find(f":{secret}@")
    if at < 0:
        return False
    host = re.match(r"[^/:?#\s'\"`]*", line[at + len(secret) + 2 :])
    name = host.group(0).lower().rstrip(".") if host else ""
    return name in EXAMPLE_HOSTS or name.endswith(EXAMPLE_SUFFIXES)


def is_not_a_credential(secret: str, plugin: Any, line: str) -> bool:
    """detect-secrets filter: a generic detector's finding that is a reference, a placeholder or
    data rather than a credential (module docstring). Known formats are never filtered here."""
    kind = type(plugin).__name__
    if kind == "KeywordDetector":
        return _keyword_is_not_a_secret(secret, line)
    if kind in ("Base64HighEntropyString", "HexHighEntropyString"):
        return _string_is_unnamed(secret, line)
    if kind == "BasicAuthDetector":
        return _url_is_an_example(secret, line)
    return False


def is_key_header_alone(plugin: Any, line: str, context: Any) -> bool:
    """detect-secrets filter: a private key's BEGIN line with no key material after it on the line
    or in the next lines (a PEM body, or a JSON string's `\\n`-joined one)."""
    if type(plugin).__name__ != "PrivateKeyDetector":
        return False
    snippet = list(getattr(context, "lines", None) or [line])
    target = int(getattr(context, "target_index", 0) or 0)
    rest = line + "\n" + "\n".join(snippet[target + 1 :])
    return KEY_MATERIAL.search(rest) is None
