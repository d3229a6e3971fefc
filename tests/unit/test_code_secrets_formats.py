"""npm and Hugging Face tokens are refused however they are written (issue #37): the README lists
npm among the formats refused "always, however it is written", and gives `HF_TOKEN = "hf_..."` as
its example of a named credential. Random tokens, many of them: a rule that depends on the draw
(the entropy of this token) is what let 3 of 20 through."""

from __future__ import annotations

import string

from hypothesis import given, settings
from hypothesis import strategies as st

from ktrain.inputs.code_secrets import scan

ALNUM = string.ascii_letters + string.digits
npm_tokens = st.text(ALNUM, min_size=36, max_size=36).filter(lambda t: len(set(t)) >= 10).map(lambda t: "npm_" + t)
hf_tokens = st.text(ALNUM, min_size=34, max_size=34).filter(lambda t: len(set(t)) >= 10).map(lambda t: "hf_" + t)

NPM_FORMS = (
    "# publish with {t}\n",
    'url = f"https://registry.example/{{name}}?auth={t}"\n',
    "token: {t}\n",
    "//registry.npmjs.org/:_authToken={t}\n",
    'NPM_TOKEN="{t}" npm publish\n',
)
HF_FORMS = (
    'HF_TOKEN = "{t}"\n',
    'login(token="{t}")\n',
    "# token {t}\n",
    'os.environ["HF_TOKEN"] = f"{t}"\n',
    "hf_token: {t}\n",
)


@settings(max_examples=60, deadline=None)
@given(token=npm_tokens, form=st.sampled_from(NPM_FORMS))
def test_an_npm_token_is_refused_however_it_is_written(token: str, form: str) -> None:
    found = scan([("a.py", ("x = 1\n" + form.format(t=token)).encode())])
    assert [(f.line, f.kind) for f in found if f.kind == "npm Token"] == [(2, "npm Token")]


@settings(max_examples=60, deadline=None)
@given(token=hf_tokens, form=st.sampled_from(HF_FORMS))
def test_a_hugging_face_token_is_refused_for_any_random_token(token: str, form: str) -> None:
    found = scan([("train.py", form.format(t=token).encode())])
    assert any(f.line == 1 for f in found), found


def test_placeholders_and_allowlisted_lines_are_not_tokens() -> None:
    text = (
        'HF_TOKEN = "hf_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"\n'
        "token = npm_" + "ab" * 18 + "\n"
        "t = npm_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3hJ5  # pragma: allowlist secret\n"
        "name = my_npm_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3hJ5x\n"  # longer than a token, and prefixed
    )
    assert [f for f in scan([("a.py", text.encode())]) if f.kind in ("npm Token", "Hugging Face Token")] == []
