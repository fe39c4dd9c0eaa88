"""Alert actions (SPEC 14): what an operator can do about an alert where they stand, and each
press's run, sent to the WMS by a webhook through the outbox."""

from __future__ import annotations

import secrets
import uuid

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MinLengthValidator, RegexValidator
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from config import timestamps
from config.bulk_writes import AnnouncingManager
from outbound.hosts import URLRefused, check_url
from subscriptions.models import MessageType, Warehouse

URL_MAX_LENGTH = 1024
action_code_validator = RegexValidator(
    r"^[a-z0-9][a-z0-9_-]*$", _("Use small letters, digits, '_' and '-' (e.g. replenish-task).")
)


def generate_secret() -> str:
    """A new signing secret: 32 random bytes as 64 hex digits."""
    return secrets.token_hex(32)


def check_webhook_url(url: str) -> str:
    """The URL, if the server may post to it (ALERT_WEBHOOK_ALLOWED_HOSTS, the shared SSRF
    guard); ValidationError saying why otherwise."""
    try:
        return check_url(
            url, allowed=settings.ALERT_WEBHOOK_ALLOWED_HOSTS, max_length=URL_MAX_LENGTH
        )
    except URLRefused as refused:
        if refused.reason == "host":
            raise ValidationError(
                _(
                    "%(host)s (with its port) is not in ALERT_WEBHOOK_ALLOWED_HOSTS: the server "
                    "posts only to hosts listed there."
                ),
                params={"host": refused.host},
                code="host",
            ) from None
        if refused.reason == "not_https":
            raise ValidationError(_("The webhook must be an https:// URL."), code="https") from None
        raise ValidationError(_("The webhook is not a valid URL."), code="invalid") from None


class AlertAction(models.Model):
    """One action offered on the alerts of a message type, e.g. "Replenishment task created"."""

    message_type = models.ForeignKey(
        MessageType,
        on_delete=models.CASCADE,
        related_name="alert_actions",
        verbose_name=_("message type"),
    )
    code = models.CharField(
        _("code"),
        max_length=32,
        validators=[action_code_validator],
        help_text=_("Unique within the message type; the API names the action by it."),
    )
    label = models.CharField(
        _("label"), max_length=100, help_text=_("What the button says (English).")
    )
    label_zh = models.CharField(
        _("label in Chinese"), max_length=100, blank=True, help_text=_("Empty: the English label.")
    )
    url = models.CharField(
        _("webhook URL"),
        max_length=URL_MAX_LENGTH,
        help_text=_(
            "https:// on a host in ALERT_WEBHOOK_ALLOWED_HOSTS; it receives a signed POST per run."
        ),
    )
    secret = models.CharField(
        _("secret"),
        max_length=64,
        default=generate_secret,
        validators=[MinLengthValidator(32)],
        help_text=_(
            "Signs each call (X-WMS-Signature: sha256=<HMAC-SHA256 of the body>). "
            "Generated; give it to the WMS."
        ),
    )
    resolves = models.BooleanField(
        _("resolves"),
        default=False,
        help_text=_("A successful run resolves the alert (by the one who pressed)."),
    )
    confirm_field = models.CharField(
        _("confirm field"),
        max_length=64,
        blank=True,
        help_text=_(
            "A key of the notification's data (e.g. bin) whose value must be scanned "
            "to run it. Empty: no scan. The alerts of this type must carry it: on one whose "
            "data lacks it, the page shows the action disabled with the reason (saving warns "
            "when recent alerts lack it)."
        ),
    )
    confirm_label = models.CharField(
        _("scan prompt"),
        max_length=100,
        blank=True,
        help_text=_(
            "What the scan field says, in words (e.g. Scan the bin). Empty: "
            "“Scan the <confirm field>”."
        ),
    )
    confirm_label_zh = models.CharField(
        _("scan prompt in Chinese"),
        max_length=100,
        blank=True,
        help_text=_("E.g. 扫描库位. Empty: the English prompt's pattern in Chinese."),
    )
    is_active = models.BooleanField(_("active"), default=True)

    objects = AnnouncingManager()  # bulk writes are announced (config/bulk_writes.py)

    class Meta:
        verbose_name = _("alert action")
        verbose_name_plural = _("alert actions")
        ordering = ["message_type__code", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["message_type", "code"],
                name="alert_action_unique_code",
                violation_error_message=_("This message type has an action with this code."),
            )
        ]

    def __str__(self) -> str:
        return f"{self.message_type.code} · {self.code}"

    def clean(self) -> None:
        super().clean()
        if self.url:
            try:
                check_webhook_url(self.url)
            except ValidationError as exc:
                raise ValidationError({"url": exc.messages}) from None

    def label_in(self, language: str | None) -> str:
        if (language or "").lower().startswith("zh") and self.label_zh:
            return self.label_zh
        return self.label


class RunStatus(models.TextChoices):
    PENDING = "pending", _("Pending")
    SUCCEEDED = "succeeded", _("Succeeded")
    FAILED = "failed", _("Failed")


class ActionRun(models.Model):
    """One press of an action on one alert. Its id is the Idempotency-Key of every webhook call
    (the outbox message has the same id). While one run of an action on an alert is pending or
    succeeded, pressing again answers that run: the database holds at most one such run."""

    id = models.UUIDField(_("ID"), primary_key=True, default=uuid.uuid4, editable=False)
    action = models.ForeignKey(
        AlertAction, on_delete=models.CASCADE, related_name="runs", verbose_name=_("action")
    )
    warehouse = models.ForeignKey(
        Warehouse, on_delete=models.CASCADE, related_name="+", verbose_name=_("warehouse")
    )
    notification_id = models.CharField(_("notification ID"), max_length=36, db_index=True)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        related_name="+",
        verbose_name=_("user"),
    )
    username = models.CharField(
        _("username"), max_length=150, help_text=_("Who pressed it (kept if renamed).")
    )
    scan = models.CharField(_("scan"), max_length=200, blank=True)
    status = models.CharField(
        _("status"), max_length=10, choices=RunStatus.choices, default=RunStatus.PENDING
    )
    result = models.TextField(
        _("result"), blank=True, help_text=_("The webhook's answer (2,000 characters).")
    )
    created_at = models.DateTimeField(_("created at"), default=timestamps.now)
    finished_at = models.DateTimeField(_("finished at"), null=True, blank=True)
    # Its outbox message while it is kept (OUTBOX_RETENTION_DAYS after it ended); its attempts
    # are copied here when the run ends, so the run tells them after the message is gone.
    message = models.OneToOneField(
        "outbox.OutboxMessage",
        on_delete=models.SET_NULL,
        null=True,
        related_name="+",
        verbose_name=_("outbox message"),
    )
    attempts = models.PositiveIntegerField(
        _("attempts"), default=0, help_text=_("Webhook calls made (when ended).")
    )
    # The press's Idempotency-Key (SPEC 11): a hash of the key, of the request, and the answer
    # it got, so that a retry with the key (within IDEMPOTENCY_TTL_SECONDS) gets that answer.
    idempotency_key = models.CharField(_("idempotency key"), max_length=32, blank=True)
    idempotency_fingerprint = models.CharField(
        _("idempotency fingerprint"), max_length=64, blank=True
    )
    first_answer = models.JSONField(_("first answer"), null=True, blank=True)

    class Meta:
        verbose_name = _("action run")
        verbose_name_plural = _("action runs")
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["user", "idempotency_key"],
                condition=~Q(idempotency_key=""),
                name="action_run_unique_idempotency_key",
            ),
            models.UniqueConstraint(
                fields=["action", "warehouse", "notification_id"],
                condition=Q(status__in=["pending", "succeeded"]),
                name="action_run_one_live",
            ),
        ]

    def __str__(self) -> str:
        return gettext("%(action)s on %(notification)s by %(user)s (%(status)s)") % {
            "action": self.action,
            "notification": self.notification_id,
            "user": self.username,
            "status": self.get_status_display(),
        }
