from typing import Any

from django.apps import AppConfig


class ActionsConfig(AppConfig):
    name = "actions"
    verbose_name = "Alert actions"

    def ready(self) -> None:
        from django.db.models.signals import post_delete, post_save

        from directory.signals import changed
        from notifications import hooks
        from outbox import handlers

        from . import catalog, followups, mail, services
        from .models import AlertAction

        handlers.register(
            services.WEBHOOK,
            handlers.Handler(
                send=services.Webhooks.send,
                settle=services.Webhooks.settle,
                reopen=services.Webhooks.reopen,
            ),
        )
        handlers.register(mail.EMAIL, handlers.Handler(send=mail.send, settle=mail.settle))
        hooks.actions.of = catalog.actions_of
        hooks.actions.now = catalog.actions_now
        hooks.actions.fit = catalog.fit
        hooks.listen(hooks.Published, followups.after_publish)

        def actions_changed(sender: Any, using: str = "default", **kwargs: Any) -> None:
            changed(using)  # every process drops its catalog (directory.cache.held) at once

        post_save.connect(actions_changed, sender=AlertAction, dispatch_uid="actions-saved")
        post_delete.connect(actions_changed, sender=AlertAction, dispatch_uid="actions-deleted")
