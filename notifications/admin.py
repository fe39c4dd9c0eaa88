"""Admin of the managers' reports: the alert report and the noise report, for staff."""

from __future__ import annotations

from django.conf import settings
from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils.translation import ngettext

from . import noise_report, reports
from .models import AlertReport, NoiseReport

REPORT_TEMPLATE = "admin/notifications/alertreport/report.html"
NOISE_REPORT_TEMPLATE = "admin/notifications/noisereport/report.html"
REPORT_DAY_CHOICES = (1, 7, 30)


def _report_days(request: HttpRequest) -> int:
    """The period a report page asks for: `?days=`, within 1..ALERT_REPORT_RETENTION_DAYS."""
    try:
        days = int(request.GET.get("days", "7"))
    except ValueError:
        days = 7
    return max(1, min(days, settings.ALERT_REPORT_RETENTION_DAYS))


@admin.register(AlertReport)
class AlertReportAdmin(admin.ModelAdmin):
    """The same table as GET /api/v1/reports/alerts/, for staff, with a choice of period."""

    def has_module_permission(self, request: HttpRequest) -> bool:
        return request.user.is_active and request.user.is_staff

    def has_view_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return request.user.is_active and request.user.is_staff

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    template = REPORT_TEMPLATE

    def title(self, days: int) -> str:
        return ngettext(
            "Alerts of the last %(days)d day", "Alerts of the last %(days)d days", days
        ) % {"days": days}

    def report(self, days: int) -> object:
        return reports.alert_report(days=days)

    def changelist_view(
        self, request: HttpRequest, extra_context: dict | None = None
    ) -> HttpResponse:
        if not self.has_view_permission(request):
            raise PermissionDenied
        days = _report_days(request)
        context = {
            **self.admin_site.each_context(request),
            "title": self.title(days),
            "opts": self.model._meta,
            "report": self.report(days),
            "day_choices": REPORT_DAY_CHOICES,
            "days": days,
        }
        return TemplateResponse(request, self.template, context)


@admin.register(NoiseReport)
class NoiseReportAdmin(AlertReportAdmin):
    """The same tables as GET /api/v1/reports/noise/ (SPEC 17), for staff."""

    template = NOISE_REPORT_TEMPLATE

    def title(self, days: int) -> str:
        return ngettext(
            "Noise of the last %(days)d day", "Noise of the last %(days)d days", days
        ) % {"days": days}

    def report(self, days: int) -> object:
        return noise_report.noise_report(days=days)
