from django.apps import AppConfig


class OutboxConfig(AppConfig):
    name = "outbox"
    verbose_name = "Outbox"

    def ready(self) -> None:
        from django.conf import settings

        from config.beat import add_entries
        from config.metrics import LIVE_COLLECTORS

        from .metrics import Waiting

        LIVE_COLLECTORS.append(Waiting())
        add_entries(
            {
                "pass-outbox": {
                    "task": "outbox.tasks.pass_outbox",
                    "schedule": settings.OUTBOX_PASS_SECONDS,
                    # A tick queued while no worker ran is dropped: the next one does its work.
                    "options": {"expires": settings.OUTBOX_PASS_SECONDS},
                },
                "purge-outbox": {
                    "task": "outbox.tasks.purge_outbox",
                    "schedule": settings.OUTBOX_PURGE_SECONDS,
                    "options": {"expires": settings.OUTBOX_PURGE_SECONDS},
                },
            }
        )
