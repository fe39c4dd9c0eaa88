"""The Celery app (`celery -A config worker|beat`); tasks and beat schedule come from settings
and from the apps (their tasks' queues, their beat entries: config/queues.py, config/beat.py)."""

import os
from typing import Any

from celery import Celery, signals

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

# Every task runs through OncePerTickTask: beat-sent runs claim their tick (config/beat.py).
app = Celery("config", task_cls="config.beat:OncePerTickTask")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


# A worker without -Q consumes every queue the product's tasks go to, and every worker reports
# the queues it consumes for /healthz (config/queues.py; imported here only once Django is set up).
@signals.celeryd_init.connect
def _consume_every_product_queue(instance: Any = None, **kwargs: Any) -> None:
    from config import queues

    queues.consume_every_product_queue(instance)


@signals.worker_ready.connect
def _report_consumed_queues(sender: Any = None, **kwargs: Any) -> None:
    from config import queues

    queues.start_heartbeat(sender)


@signals.worker_shutdown.connect
def _stop_reporting(**kwargs: Any) -> None:
    from config import queues

    queues.stop_heartbeats()
