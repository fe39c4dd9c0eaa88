from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ActionsConfig(AppConfig):
    name = "actions"
    verbose_name = _("Alert actions")

    def ready(self) -> None:
        from django.conf import settings

        from config import beat_schedule
        from notifications import hooks
        from outbox import handlers

        from . import catalog, followups, mail, webhooks

        handlers.register(
            webhooks.WEBHOOK,
            handlers.Handler(
                send=webhooks.Webhooks.send,
                settle=webhooks.Webhooks.settle,
                reopen=webhooks.Webhooks.reopen,
            ),
        )
        handlers.register(mail.EMAIL, handlers.Handler(send=mail.send, settle=mail.settle))
        hooks.actions.of = catalog.actions_of
        hooks.actions.now = catalog.actions_now
        hooks.actions.fit = catalog.fit
        hooks.listen(hooks.Published, followups.after_publish)
        beat_schedule.register(
            "send-alert-reminders",
            task="actions.tasks.send_reminders",
            seconds=settings.ALERT_REMINDER_SECONDS,
        )
