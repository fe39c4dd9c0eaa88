"""Database side of notifications: only permissions and the reports' admin pages; notifications
live in Redis."""

from django.db import models
from django.utils.translation import gettext_lazy as _


class NotificationPermissions(models.Model):
    """Holds the permissions of the notifications API; it has no table."""

    class Meta:
        managed = False
        default_permissions = ()
        permissions = [("publish_notification", "Can publish notifications through the API")]

    def __str__(self) -> str:
        return "notification permissions"


class AlertReport(models.Model):
    """The managers' report in the admin (notifications.reports); it has no table."""

    class Meta:
        managed = False
        default_permissions = ()
        verbose_name = _("alert report")
        verbose_name_plural = _("alert report")

    def __str__(self) -> str:
        return "alert report"


class NoiseReport(models.Model):
    """The noise report in the admin (notifications.noise_report, SPEC 17); it has no table."""

    class Meta:
        managed = False
        default_permissions = ()
        verbose_name = _("noise report")
        verbose_name_plural = _("noise report")

    def __str__(self) -> str:
        return "noise report"
