from django.apps import AppConfig


class ShiftsConfig(AppConfig):
    name = "shifts"
    verbose_name = "Shifts"

    def ready(self) -> None:
        from notifications import hooks

        from . import reports, selectors  # selectors import the schedule's holding (cache.py)

        hooks.shifts = selectors  # who is on shift, for escalation and snoozes
        hooks.shift_report = reports.shift_report  # the alert report's rows per shift
