from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ShiftsConfig(AppConfig):
    name = "shifts"
    verbose_name = _("Shifts")

    def ready(self) -> None:
        from django.conf import settings

        from config import beat_schedule
        from notifications import hooks

        from . import reports, selectors  # selectors import the schedule's holding (cache.py)

        hooks.shifts = selectors  # who is on shift, for escalation and snoozes
        hooks.shift_report = reports.shift_report  # the alert report's rows per shift
        hooks.shift_runs = reports.shift_runs  # the noise report's operator-hours (SPEC 17)
        beat_schedule.register(
            "hand-over-shifts",
            task="shifts.tasks.hand_over_shifts",
            seconds=settings.SHIFT_HANDOVER_SECONDS,
        )
