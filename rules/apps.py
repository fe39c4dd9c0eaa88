"""Django app configuration of rules: its beat entries, and the owner check and sweep of the
orphan cleanup (the core names no feature)."""

from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class RulesConfig(AppConfig):
    name = "rules"
    verbose_name = _("Rules")

    def ready(self) -> None:
        from django.conf import settings

        from config import beat_schedule, orphans
        from notifications import cleanup as notification_cleanup

        from . import cleanup

        # The notifications sweep walks the warehouse keys; this says which rules still exist.
        notification_cleanup.add_owner_check("rule", cleanup.existing_rule_ids)
        orphans.add_sweep("Rules", cleanup.sweep_orphans)  # manage.py sweep_orphans runs it
        # Which rules are due (each rule's own interval decides whether it runs). The task
        # keeps its name from when rules lived in notifications/ (tasks.py).
        beat_schedule.register(
            "run-due-rules",
            task="notifications.rules.tasks.run_due_rules",
            seconds=settings.RULES_TICK_SECONDS,
        )
        beat_schedule.register(
            "sweep-rule-orphans",
            task="rules.tasks.sweep_rule_orphans",
            seconds=settings.ORPHAN_SWEEP_SECONDS,
        )
