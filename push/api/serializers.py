"""Input validation and output shapes of the Web Push API (SPEC section 12)."""

from __future__ import annotations

import binascii
from typing import Any

from cryptography.hazmat.primitives.asymmetric import ec
from django.utils.translation import gettext_lazy as _
from rest_framework import serializers

from config.fields import BoundedListField
from notifications.api.serializers import WarehouseField

from .. import hosts, keys
from ..models import ENDPOINT_MAX_LENGTH

# More warehouses than one browser could usefully follow; the list is capped before its items
# are looked at.
MAX_WAREHOUSES = 100
AUTH_SECRET_BYTES = 16  # RFC 8291: the browser's auth secret is 16 octets


def _b64url(value: str, field: str) -> bytes:
    try:
        return keys.b64url_decode(value)
    except binascii.Error:
        raise serializers.ValidationError(
            _("%(field)s must be base64url.") % {"field": field}
        ) from None


class KeysInput(serializers.Serializer):
    p256dh = serializers.CharField(max_length=100, help_text="The browser's P-256 public key.")
    auth = serializers.CharField(max_length=50, help_text="The browser's 16-byte auth secret.")

    def validate_p256dh(self, value: str) -> str:
        raw = _b64url(value, "p256dh")
        try:
            ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), raw)
        except ValueError:
            raise serializers.ValidationError(
                _("p256dh must be an uncompressed P-256 public key (65 bytes).")
            ) from None
        if len(raw) != 65:
            raise serializers.ValidationError(
                _("p256dh must be an uncompressed P-256 public key (65 bytes).")
            )
        return value.rstrip("=")

    def validate_auth(self, value: str) -> str:
        if len(_b64url(value, "auth")) != AUTH_SECRET_BYTES:
            raise serializers.ValidationError(_("auth must be 16 bytes."))
        return value.rstrip("=")


class EndpointField(serializers.CharField):
    """A push service URL the server may post to (the SSRF guard, push.hosts)."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(max_length=ENDPOINT_MAX_LENGTH, trim_whitespace=False, **kwargs)  # type: ignore[arg-type]

    def to_internal_value(self, data: Any) -> str:
        value = super().to_internal_value(data)
        try:
            return hosts.check_endpoint(value)
        except hosts.EndpointRefused as exc:
            raise serializers.ValidationError(str(exc)) from None


class SubscriptionInput(serializers.Serializer):
    """The browser's PushSubscription JSON, plus the warehouses whose alerts it wants."""

    endpoint = EndpointField(help_text="`https://` on a host of WEB_PUSH_ALLOWED_HOSTS.")
    keys = KeysInput()
    expirationTime = serializers.IntegerField(
        required=False, allow_null=True, help_text="Sent by browsers; ignored."
    )
    warehouses = BoundedListField(
        child=WarehouseField(), min_length=1, max_length=MAX_WAREHOUSES, help_text="Warehouse ids."
    )


class EndpointInput(serializers.Serializer):
    endpoint = serializers.CharField(max_length=ENDPOINT_MAX_LENGTH, trim_whitespace=False)


class SubscriptionOutput(serializers.Serializer):
    endpoint = serializers.CharField()
    warehouses = serializers.SerializerMethodField()
    created_at = serializers.DateTimeField()

    def get_warehouses(self, subscription: object) -> list[int]:
        return sorted(w.pk for w in subscription.warehouses.all())  # type: ignore[attr-defined]


class KeyOutput(serializers.Serializer):
    public_key = serializers.CharField(
        help_text="The VAPID application server key (base64url): `applicationServerKey`."
    )


class CsrfOutput(serializers.Serializer):
    csrf_token = serializers.CharField(
        help_text="The session's CSRF token, for the `X-CSRFToken` header of a write."
    )
