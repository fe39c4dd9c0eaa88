"""Browsers that receive critical alerts by Web Push, and the key pair that signs the pushes."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from subscriptions.models import Warehouse

# Longest endpoint accepted: the push services' own are 150-500 characters.
ENDPOINT_MAX_LENGTH = 1024


class PushSubscription(models.Model):
    """One browser's push subscription (the `PushSubscription` JSON of the Push API), owned by
    the user who signed in there last, for the warehouses whose alerts it should receive.

    An endpoint belongs to one browser, so it is unique: when another user subscribes the same
    browser (with the same keys, which only that browser has) it becomes theirs, and the
    previous user's alerts stop going to that device.
    """

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        verbose_name=_("user"),
        on_delete=models.CASCADE,
        related_name="push_subscriptions",
    )
    endpoint = models.CharField(_("endpoint"), max_length=ENDPOINT_MAX_LENGTH, unique=True)
    p256dh = models.CharField(
        _("P-256 key"),
        max_length=100,
        help_text=_("The browser's P-256 public key (base64url), to encrypt to."),
    )
    auth = models.CharField(
        _("auth secret"), max_length=50, help_text=_("The browser's auth secret (base64url).")
    )
    warehouses = models.ManyToManyField(
        Warehouse, verbose_name=_("warehouses"), related_name="push_subscriptions"
    )
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)
    updated_at = models.DateTimeField(_("updated at"), auto_now=True)
    last_success_at = models.DateTimeField(_("last success at"), null=True, blank=True)
    last_failure_at = models.DateTimeField(_("last failure at"), null=True, blank=True)
    failures = models.PositiveIntegerField(
        _("failures"), default=0, help_text=_("Failed pushes since the last one that got through.")
    )
    total_failures = models.PositiveIntegerField(_("total failures"), default=0)
    last_error = models.CharField(_("last error"), max_length=200, blank=True)

    class Meta:
        verbose_name = _("push subscription")
        verbose_name_plural = _("push subscriptions")
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.user} · {self.endpoint[:60]}"

    def as_webpush_info(self) -> dict[str, object]:
        """The subscription in the shape pywebpush (and the browser's toJSON()) use."""
        return {"endpoint": self.endpoint, "keys": {"p256dh": self.p256dh, "auth": self.auth}}


class VapidKeyPair(models.Model):
    """The key pair generated when the environment configures none: one row, made once.

    `name` is unique, so of two processes generating at once one row wins and both use it.
    """

    name = models.CharField(max_length=20, unique=True, default="default")
    private_key = models.CharField(max_length=64, help_text="Raw 32-byte P-256 key, base64url.")
    public_key = models.CharField(max_length=100, help_text="Uncompressed point, base64url.")
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"VAPID key {self.name} ({self.public_key[:16]}…)"
