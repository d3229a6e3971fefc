"""What `--code` refuses (ktrain.inputs.secret_policy): real secrets, whatever the line around them
looks like; not the words around secrets that ordinary code and Kubernetes manifests are full of.
Each case is a file as a user would have it, scanned as `--code` scans it."""

from __future__ import annotations

import pytest

from ktrain.inputs.code_secrets import scan
from ktrain.inputs.secret_policy import key_of, words

PEM_BODY = "MIIEowIBAAKCAQEAxzYuc22QSst/dS7geYYK5l5kLxU0tayNdixkEQ17ix+CUcUbKSo2kPw7z"

REFUSED = [
    ("credentials.ini", "[default]\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n"),
    ("app.py", 'client = OpenAI(api_key="sk-4f9Kd8sLm2Qw7Xz1Bv6NT3BlbkFJt3Hy5Jc0Rp8Ue2Ia9Og7Tk")\n'),
    ("ci.py", 'headers = {"Authorization": auth("ghp_abcdefghijklmnopqrstuvwxyz0123456789")}\n'),
    ("aws.py", 'boto3.client("s3", aws_access_key_id="AKIAIOSFODNN7EXAMPLE")\n'),
    ("notes.txt", f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\n-----END RSA PRIVATE KEY-----\n"),
    ("sa.json", '{"private_key": "-----BEGIN PRIVATE KEY-----\\n' + PEM_BODY + '\\n-----END PRIVATE KEY-----\\n"}\n'),
    ("db.py", 'ENGINE = create_engine("postgresql://admin:Xk9mP2vLq7@db.prod.internal:5432/app")\n'),
    ("settings.py", 'SECRET_KEY = "django-insecure-8x#k2$m9vq!w7e@z"\n'),
    ("train.py", 'wandb.login(key="9a1f7c3e5b2d4f6a8c0e1b3d5f7a9c2e4b6d8f0a")\n'),
    ("train.py", 'os.environ["HF_TOKEN"] = "hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"\n'),
    ("config.yaml", "database:\n  password: Zx9kQ2vmB7tR\n"),
    ("config.json", '{"api_key": "a8f5f167f44f4964e6c998dee827110c"}\n'),
    ("slack.py", 'TOKEN = "xoxb-123456789012-123456789012-abcdefghijklmnopqrstuvwx"\n'),
    ("pass.py", 'PASSWORD = "correct-horse-battery-staple"\n'),
]

PASSED = [
    ("job.yaml", "volumes:\n- name: keys\n  secret:\n    secretName: mpi-ssh-keys\n"),
    (
        "pod.yaml",
        "spec:\n  imagePullSecrets:\n  - name: regcred\n  containers:\n  - name: c\n    env:\n    - name: TOKEN\n"
        "      valueFrom:\n        secretKeyRef:\n          name: hf-token\n          key: token\n"
        "    envFrom:\n    - secretRef:\n        name: app-secrets\n",
    ),
    ("gotypes.py", 'V = _s(imagePullSecrets="LocalObjectReference", secretKeyRef="LocalObjectReference")\n'),
    ("gotypes.py", 'E = _s("prefix", configMapRef="LocalObjectReference", secretRef="LocalObjectReference")\n'),
    ("README.md", 'The filter hides `client = OpenAI(api_key="sk-...")`, the commonest way.\n'),
    ("test_cli.py", "secret_file = {'secret': 'supersecret', 'secret2': 'verysecret'}\n"),
    ("test_parsers.py", '"https://user:pw@host:1234/p",\n'),
    ("app.py", 'api_key = os.environ["OPENAI_API_KEY"]\npassword = getpass()\ntoken = get_secret("hf")\n'),
    (
        "consts.py",
        'ENV_API_KEY = "MITHRIL_API_KEY"\nAPI_KEY_HEADER = "X-API-KEY"\nSSH_PRIVATE_KEY = "ssh-privatekey"\n',
    ),
    ("consts.py", 'SECRET_TYPE_SSH_AUTH = "kubernetes.io/ssh-auth"\nsecret_name = "k8s-creds"\n'),
    ("test_login.py", 'password = "test-password"\napi_key = "your-api-key"\nsecret = "changeme"\n'),
    ("test_user.py", "user.password = 'new'\nassert user.password == 'old'\n"),
    (
        "model.py",
        'model = AutoModel.from_pretrained("bert-base", revision="531ae679ab5c13a3bf49607e1b6e6459300772e9")\n',
    ),
    ("hashes.py", 'CHECKSUMS = {\n    "csv": "eea64c71ca8b46dd3f537ed218fc9bf495d5707789152eb2764f5c78fa66d59d",\n}\n'),
    ("names.py", '_no_split_modules = ["Qwen2_5OmniToken2WavDiTModel", "Qwen2_5OmniToken2WavBigVGANModel"]\n'),
    ("doc.py", '"""Connect with ``https://user:password@host:8080``."""\n'),
    ("alembic.ini", "[alembic]\n# sqlalchemy.url = driver://user:pass@localhost/dbname\n"),
    ("test_pip.py", 'url = "https://user:s3cret@pypi.example/simple"\n'),
    ("pem.py", "key_pem = f'-----BEGIN EC PRIVATE KEY-----\\n{key_content}\\n-----END EC PRIVATE KEY-----'\n"),
    ("fixture.py", 'password = "hunter2-is-long"  # pragma: allowlist secret\n'),
]


@pytest.mark.parametrize(("name", "content"), REFUSED, ids=[f"{n}:{c[:30]}" for n, c in REFUSED])
def test_real_secrets_are_refused(name: str, content: str) -> None:
    assert scan([(name, content.encode())]), content


@pytest.mark.parametrize(("name", "content"), PASSED, ids=[f"{n}:{c[:30]}" for n, c in PASSED])
def test_ordinary_code_and_manifests_pass(name: str, content: str) -> None:
    assert scan([(name, content.encode())]) == [], content


def test_keys_and_words() -> None:
    assert words("imagePullSecrets") == ["image", "pull", "secrets"]
    assert words("X-API-KEY") == ["x", "api", "key"]
    assert key_of("hf_x", 'os.environ["HF_TOKEN"] = "hf_x"') == "HF_TOKEN"
    assert key_of("v", 'wandb.login(key="v")') == "key"
    assert key_of("v", '{"api_key": "v"}') == "api_key"
    assert key_of("v", 'if "v" == my_password:') == "my_password"
    assert key_of("v", '["a", "v"]') == ""
