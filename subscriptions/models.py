"""Who receives what: message types, warehouses, and subscriptions of users or roles to them."""

from __future__ import annotations

import zoneinfo
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError
from django.core.validators import MinValueValidator, RegexValidator
from django.db import models
from django.db.models import Q
from django.utils.translation import get_language, gettext
from django.utils.translation import gettext_lazy as _

from config.bulk_writes import AnnouncingManager

if TYPE_CHECKING:
    from .store import Pair

code_validator = RegexValidator(
    r"^[A-Z0-9][A-Z0-9_-]*$",
    _("Use capital letters, digits, '_' and '-' (e.g. SH01, REP_NOTICE)."),
)


def validate_timezone(value: str) -> None:
    """An IANA zone name the standard library knows (Europe/Berlin, Asia/Shanghai, UTC)."""
    try:
        zoneinfo.ZoneInfo(value)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise ValidationError(
            _("%(value)s is not a time zone name such as Europe/Berlin or Asia/Shanghai."),
            params={"value": value},
        ) from None


def default_timezone() -> str:
    return str(settings.TIME_ZONE)


class Warehouse(models.Model):
    code = models.CharField(_("code"), max_length=16, unique=True, validators=[code_validator])
    name = models.CharField(_("name"), max_length=100)
    is_active = models.BooleanField(_("active"), default=True)
    timezone = models.CharField(
        _("timezone"),
        max_length=64,
        default=default_timezone,
        validators=[validate_timezone],
        help_text=_(
            "The IANA time zone of the warehouse, e.g. Asia/Shanghai: its shifts' times "
            "are local times in this zone."
        ),
    )

    objects = AnnouncingManager()  # bulk writes are announced (config/bulk_writes.py)

    class Meta:
        verbose_name = _("warehouse")
        verbose_name_plural = _("warehouses")
        ordering = ["code"]

    def __str__(self) -> str:
        return f"{self.code} - {self.name}"

    @staticmethod
    def id_of(warehouse: Warehouse | int) -> int:
        """The id of a warehouse given as a row or as its id (APIs here accept both)."""
        return warehouse.pk if isinstance(warehouse, Warehouse) else int(warehouse)


class Severity(models.TextChoices):
    """How urgent a notification is; escalation raises it one step (info, warning, critical)."""

    INFO = "info", _("Info")
    WARNING = "warning", _("Warning")
    CRITICAL = "critical", _("Critical")


class MessageType(models.Model):
    code = models.CharField(_("code"), max_length=32, unique=True, validators=[code_validator])
    name = models.CharField(
        _("name"),
        max_length=100,
        help_text=_("The name people read, e.g. 补货通知 (the Chinese page shows it)."),
    )
    name_en = models.CharField(
        _("name in English"),
        max_length=100,
        blank=True,
        help_text=_("e.g. Replenishment notice: the English page shows it (empty: the name)."),
    )
    description = models.TextField(_("description"), blank=True)
    default_ttl_seconds = models.PositiveIntegerField(
        _("time to live (seconds)"),
        default=24 * 3600,
        validators=[MinValueValidator(1)],
        help_text=_("How long a notification of this type lives, in seconds."),
    )
    is_active = models.BooleanField(_("active"), default=True)
    default_severity = models.CharField(
        _("default severity"),
        max_length=8,
        choices=Severity.choices,
        default=Severity.INFO,
        help_text=_(
            "Severity of its notifications unless the publisher (or a rule) says otherwise."
        ),
    )
    escalate_after_seconds = models.PositiveIntegerField(
        _("escalate after (seconds)"),
        null=True,
        blank=True,
        validators=[MinValueValidator(1)],
        help_text=_(
            "A notification still open (nobody claimed or resolved it) this many seconds after "
            "publishing is escalated once: its severity goes up one step and it is delivered to "
            "the escalation role. Empty: never escalate."
        ),
    )
    escalation_role = models.ForeignKey(
        Group,
        verbose_name=_("escalation role"),
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="escalated_message_types",
        help_text=_(
            "The role (group) whose inbox in the same warehouse receives escalated notifications "
            "of this type, e.g. Supervisors."
        ),
    )

    remind_every_seconds = models.PositiveIntegerField(
        _("remind every (seconds)"),
        null=True,
        blank=True,
        validators=[MinValueValidator(1)],
        help_text=_(
            "While an alert stays open (nobody claimed it), push it again every this many "
            "seconds to the members on shift who see it (SPEC 14). Empty: never."
        ),
    )
    remind_max = models.PositiveSmallIntegerField(
        _("reminders at most"), default=3, help_text=_("At most this many reminders per alert.")
    )
    claim_timeout_seconds = models.PositiveIntegerField(
        _("claim timeout (seconds)"),
        null=True,
        blank=True,
        validators=[MinValueValidator(1)],
        help_text=_(
            "An alert claimed this long with no progress (no action run, no resolve) is "
            "released by the system, unread again and pushed again (SPEC 17). Empty: never."
        ),
    )
    email_after_seconds = models.PositiveIntegerField(
        _("e-mail after (seconds)"),
        null=True,
        blank=True,
        validators=[MinValueValidator(1)],
        help_text=_(
            "An alert still open this long after publishing is e-mailed once to the members "
            "with an e-mail address of the escalation role (else of the subscribed roles) who "
            "are on shift (critical: all of them). Empty: never."
        ),
    )
    internal = models.BooleanField(
        _("internal"),
        default=False,
        editable=False,
        help_text=_(
            "Used by the product itself (the delivery canaries): nobody subscribes to it and no "
            "report counts it."
        ),
    )

    objects = AnnouncingManager()  # bulk writes are announced (config/bulk_writes.py)

    class Meta:
        verbose_name = _("message type")
        verbose_name_plural = _("message types")
        ordering = ["code"]

    def __str__(self) -> str:
        # The admin's lists, filters and pickers show this: in the admin's language.
        return f"{self.code} - {self.display_name(get_language())}"

    def display_name(self, language: str | None) -> str:
        """The name for a page in `language` (a Django language code): the English name on an
        English page when there is one, else `name`."""
        if (language or "").lower().startswith("en") and self.name_en:
            return self.name_en
        return self.name


class Subscription(models.Model):
    """A user or a role (an auth Group) receives one message type in one warehouse."""

    message_type = models.ForeignKey(
        MessageType,
        verbose_name=_("message type"),
        on_delete=models.CASCADE,
        related_name="subscriptions",
        limit_choices_to={"internal": False},  # the admin offers no internal type
    )
    warehouse = models.ForeignKey(
        Warehouse,
        verbose_name=_("warehouse"),
        on_delete=models.CASCADE,
        related_name="subscriptions",
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        verbose_name=_("user"),
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="notification_subscriptions",
    )
    role = models.ForeignKey(
        Group,
        verbose_name=_("role"),
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="notification_subscriptions",
        help_text=_("Every member of this group receives the notifications."),
    )
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)

    # Not a column: signals.remember_previous_pair notes here, before a save, the set the
    # row belonged to, so that a subscription moved elsewhere also leaves its old set.
    _previous_pair: Pair | None = None

    class Meta:
        verbose_name = _("subscription")
        verbose_name_plural = _("subscriptions")
        ordering = ["warehouse__code", "message_type__code", "id"]
        constraints = [
            models.CheckConstraint(
                condition=(
                    Q(user__isnull=False, role__isnull=True)
                    | Q(user__isnull=True, role__isnull=False)
                ),
                name="subscription_exactly_one_subscriber",
                violation_error_message=_("Choose either a user or a role, not both."),
            ),
            models.UniqueConstraint(
                fields=["message_type", "warehouse", "user"],
                condition=Q(user__isnull=False),
                name="subscription_unique_user",
                violation_error_message=_(
                    "This user already receives this type in this warehouse."
                ),
            ),
            models.UniqueConstraint(
                fields=["message_type", "warehouse", "role"],
                condition=Q(role__isnull=False),
                name="subscription_unique_role",
                violation_error_message=_(
                    "This role already receives this type in this warehouse."
                ),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.message_type.code} @ {self.warehouse.code} → {self.subscriber_label}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        # Whatever saves it (the admin, the API, code): an internal type reaches nobody.
        if MessageType.objects.filter(pk=self.message_type_id, internal=True).exists():
            raise ValidationError(
                {"message_type": "This message type is the product's own: nobody subscribes to it."}
            )
        super().save(*args, **kwargs)

    @property
    def subscriber_label(self) -> str:
        if self.user_id:
            return gettext("user %(name)s") % {"name": self.user}
        return gettext("role %(name)s") % {"name": self.role}

    @property
    def subscriber_id(self) -> str:
        """The id stored in Redis: `u:<user id>` or `r:<group id>`."""
        return subscriber_id(user_id=self.user_id, role_id=self.role_id)


def subscriber_id(*, user_id: int | None = None, role_id: int | None = None) -> str:
    if user_id is not None:
        return f"u:{user_id}"
    if role_id is not None:
        return f"r:{role_id}"
    raise ValueError("A subscriber is a user or a role.")
