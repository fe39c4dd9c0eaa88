"""A certificate authority of the demo's own and a certificate for 127.0.0.1 it signed, so the
demo can serve its WMS stand-in over HTTPS (alert actions post only to `https://`)."""

from __future__ import annotations

import datetime as dt
import ipaddress
import os
import ssl
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


@dataclass(frozen=True)
class DemoTLS:
    ca: Path  # the demo CA's certificate
    # The CAs trusted so far (REQUESTS_CA_BUNDLE, else the system's) and the demo's:
    # REQUESTS_CA_BUNDLE of the demo's processes.
    bundle: Path
    certificate: Path
    key: Path


def make(folder: Path) -> DemoTLS:
    """Make (or keep, while valid for a day more) the demo's CA and 127.0.0.1 certificate."""
    folder.mkdir(parents=True, exist_ok=True)
    found = DemoTLS(
        folder / "ca.pem", folder / "bundle.pem", folder / "server.pem", folder / "server.key"
    )
    now = dt.datetime.now(dt.UTC)
    if found.certificate.exists() and found.ca.exists():
        cert = x509.load_pem_x509_certificate(found.certificate.read_bytes())
        if cert.not_valid_after_utc > now + dt.timedelta(days=1):
            _bundle(found)
            return found
    certificates(folder)
    _bundle(found)
    return found


def certificates(folder: Path, *, days: int = 365) -> tuple[Path, Path, Path]:
    """A new CA, and a certificate for 127.0.0.1 it signed, valid for `days`, written into
    `folder`: (ca.pem, server.pem, server.key). The demo's, and the tests' HTTPS stand-ins'."""
    now = dt.datetime.now(dt.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "WMS Notify demo CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=days))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                key_cert_sign=True,
                crl_sign=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(
            x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    server = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=days))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
            critical=False,
        )
        .add_extension(x509.ExtendedKeyUsage([x509.OID_SERVER_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    paths = folder / "ca.pem", folder / "server.pem", folder / "server.key"
    paths[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(server.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    paths[2].chmod(0o600)
    return paths


def _bundle(found: DemoTLS) -> None:
    trusted = os.environ.get("REQUESTS_CA_BUNDLE") or ssl.get_default_verify_paths().cafile
    if trusted and Path(trusted).resolve() == found.bundle.resolve():
        return  # a demo started from a shell that has the demo's variables already
    pem = Path(trusted).read_bytes() if trusted and Path(trusted).is_file() else b""
    found.bundle.write_bytes(pem + b"\n" + found.ca.read_bytes())
