"""Certificates for the double's HTTPS mode: one CA, a server certificate, a client certificate.

kube-apiserver serves TLS only; a client authenticates with a bearer token or with a client
certificate its `--client-ca-file` CA signed (the user is the certificate's CN,
`k8s.io/apiserver/pkg/authentication/request/x509`). EC keys: generated in milliseconds.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
from functools import cache

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


def _pem_key(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def _issue(
    subject: str,
    issuer_key: ec.EllipticCurvePrivateKey,
    issuer: x509.Name | None,
    *,
    ca: bool = False,
    names: tuple[str, ...] = (),
    client: bool = False,
) -> tuple[bytes, bytes]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)])
    now = dt.datetime.now(dt.timezone.utc)
    builder = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(issuer or name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if names:
        alt: list[x509.GeneralName] = []
        for entry in names:
            try:
                alt.append(x509.IPAddress(ipaddress.ip_address(entry)))
            except ValueError:
                alt.append(x509.DNSName(entry))
        builder = builder.add_extension(x509.SubjectAlternativeName(alt), critical=False)
    if client:
        builder = builder.add_extension(x509.ExtendedKeyUsage([x509.OID_CLIENT_AUTH]), critical=False)
    elif not ca:
        builder = builder.add_extension(x509.ExtendedKeyUsage([x509.OID_SERVER_AUTH]), critical=False)
    signer = key if issuer is None else issuer_key
    cert = builder.sign(signer, hashes.SHA256())
    return cert.public_bytes(serialization.Encoding.PEM), _pem_key(key)


class Authority:
    """A CA and what it signed; `pem` fields are bytes."""

    def __init__(self, common_name: str = "double-ca") -> None:
        self.ca_key = ec.generate_private_key(ec.SECP256R1())
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
        now = dt.datetime.now(dt.timezone.utc)
        cert = (
            x509.CertificateBuilder()
            .subject_name(name)
            .issuer_name(name)
            .public_key(self.ca_key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=5))
            .not_valid_after(now + dt.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=True,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    key_cert_sign=True,
                    crl_sign=True,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .sign(self.ca_key, hashes.SHA256())
        )
        self.name = name
        self.ca_pem = cert.public_bytes(serialization.Encoding.PEM)

    def server(self, names: tuple[str, ...]) -> tuple[bytes, bytes]:
        return _issue("kube-apiserver", self.ca_key, self.name, names=names)

    def client(self, user: str) -> tuple[bytes, bytes]:
        return _issue(user, self.ca_key, self.name, client=True)


@cache
def shared_authority() -> Authority:
    """One CA per test process (keys are cheap, but not free)."""
    return Authority()
