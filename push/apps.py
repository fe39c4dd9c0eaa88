from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class PushConfig(AppConfig):
    name = "push"
    verbose_name = _("Web Push")

    def ready(self) -> None:
        from notifications import hooks

        from . import (
            checks,  # noqa: F401  (the configured VAPID key pair is checked at start-up)
            dispatch,
        )

        hooks.listen(hooks.Published, dispatch.after_publish)
        hooks.listen(hooks.Escalated, dispatch.after_escalation)
        hooks.listen(hooks.ClaimExpired, dispatch.after_claim_expired)
        hooks.listen(hooks.Changed, dispatch.after_change)
