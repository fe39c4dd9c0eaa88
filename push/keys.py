"""The VAPID key pair (RFC 8292) that signs every push: from the environment, or made once.

Keys travel as base64url without padding: the private key as its raw 32 bytes, the public key
as the uncompressed P-256 point (65 bytes) that browsers take as `applicationServerKey`.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from django.conf import settings

from .models import VapidKeyPair


class BadVapidKey(ValueError):
    """A configured key that is not a P-256 key in the expected encoding."""


@dataclass(frozen=True)
class VapidKeys:
    private_key: str
    public_key: str


def b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def b64url_decode(text: str) -> bytes:
    """Strict base64url, padding optional; binascii.Error on anything else."""
    if not isinstance(text, str) or not text.isascii():
        raise binascii.Error("not ASCII")
    return base64.b64decode(text + "=" * (-len(text) % 4), altchars=b"-_", validate=True)


def _pair_of(private: ec.EllipticCurvePrivateKey) -> VapidKeys:
    public = private.public_key().public_bytes(
        serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
    )
    return VapidKeys(
        b64url(private.private_numbers().private_value.to_bytes(32, "big")), b64url(public)
    )


def generate() -> VapidKeys:
    """A new random key pair."""
    return _pair_of(ec.generate_private_key(ec.SECP256R1()))


def from_private(private_key: str) -> VapidKeys:
    """The pair of a configured private key; BadVapidKey when it is not one."""
    try:
        raw = b64url_decode(private_key.strip())
    except binascii.Error as exc:
        raise BadVapidKey("is not base64url") from exc
    if len(raw) != 32:
        raise BadVapidKey(f"is {len(raw)} bytes; a raw P-256 private key is 32")
    try:
        private = ec.derive_private_key(int.from_bytes(raw, "big"), ec.SECP256R1())
    except ValueError as exc:
        raise BadVapidKey("is not a valid P-256 private key") from exc
    return _pair_of(private)


def configured() -> VapidKeys | None:
    """The pair the environment sets, or None. BadVapidKey when it is set but wrong (the
    system check refuses to start with it, see push.checks)."""
    private = settings.WEB_PUSH_VAPID_PRIVATE_KEY
    public = settings.WEB_PUSH_VAPID_PUBLIC_KEY
    if not private:
        if public:
            raise BadVapidKey("WEB_PUSH_VAPID_PUBLIC_KEY is set without its private key")
        return None
    pair = from_private(private)
    if public and public.strip().rstrip("=") != pair.public_key:
        raise BadVapidKey("WEB_PUSH_VAPID_PUBLIC_KEY is not the public key of the private key")
    return pair


def current() -> VapidKeys:
    """The key pair in use: the configured one, else the one kept in the database (made on
    first use; of two processes making it at once, the unique name lets one row win)."""
    pair = configured()
    if pair is not None:
        return pair
    fresh = generate()
    row, _ = VapidKeyPair.objects.get_or_create(
        name="default", defaults={"private_key": fresh.private_key, "public_key": fresh.public_key}
    )
    return VapidKeys(row.private_key, row.public_key)
