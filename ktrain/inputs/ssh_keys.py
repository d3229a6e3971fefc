"""SSH key pairs for MPI jobs, made at the edge with `cryptography` (never in the engine).

Upstream generates an ECDSA P-521 key: SEC1 PEM private key and an OpenSSH public key line
(ENGINE.md §6.3).
"""

from __future__ import annotations

from ktrain.engine.context import SshKeyPair


def generate_ssh_key_pair() -> SshKeyPair:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    key = ec.generate_private_key(ec.SECP521R1())
    private_pem = key.private_bytes(
        encoding=serialization.Encoding.PEM,
        format=serialization.PrivateFormat.TraditionalOpenSSL,
        encryption_algorithm=serialization.NoEncryption(),
    )
    public = key.public_key().public_bytes(
        encoding=serialization.Encoding.OpenSSH, format=serialization.PublicFormat.OpenSSH
    )
    return SshKeyPair(private_key_pem=private_pem, public_key_line=public + b"\n")
