"""The Celery queues the product's tasks go to: a worker started without `-Q` consumes them all,
and `/healthz` names those no worker consumes.

Apps say where their tasks go on the tasks themselves (`@shared_task(queue=...)`);
`product_queues()` asks Celery's own router for every task, so the list
follows what the apps declare and names no feature here.

- `celery -A config worker` (SPEC 6) consumes every product queue: Celery's workers consume
  only the default queue unless told otherwise, so a plain worker would leave pushes, the
  outbox (webhooks, e-mails) and the admin's dry runs waiting for ever. With `-Q` a worker
  consumes what it is told (the Procfiles' production split).
- Every worker writes, for each queue it consumes, `<prefix>:{consumers}:<queue>` (its name,
  expiring after three heartbeats) from a thread of its main process, every
  QUEUE_HEARTBEAT_SECONDS, so a busy worker still reports. `/healthz` reads those keys in one
  call and says `degraded` with `queues` naming each product queue without a live one.
"""

from __future__ import annotations

import logging
import threading
from functools import cache
from typing import Any

from celery import Celery
from django.conf import settings

from config.redis import get_redis

logger = logging.getLogger(__name__)

# The name of the degradation in /healthz, and how its detail starts.
QUEUES = "queues"
NO_CONSUMER = "no worker consumes: "


def consumer_key(queue: str) -> str:
    """The heartbeat of a queue's consumers (one slot for all: /healthz reads them at once)."""
    return f"{settings.WMS_REDIS_PREFIX}:{{consumers}}:{queue}"


@cache
def _import_tasks() -> None:
    """Every app's `tasks` module, imported once, as a worker does (a web process may not
    have imported them all)."""
    from django.utils.module_loading import autodiscover_modules

    autodiscover_modules("tasks")


def queue_of(app: Celery, task_name: str) -> str:
    """The queue Celery sends the task to: its route, else its own `queue`, else the default."""
    _import_tasks()
    task: Any = app.tasks[task_name]
    options = {"queue": task.queue} if getattr(task, "queue", None) else {}
    return str(app.amqp.router.route(options, task_name, (), {}, task)["queue"].name)


@cache
def product_queues() -> tuple[str, ...]:
    """Every queue a task of the product goes to (the default queue first), once per process."""
    from celery import current_app as app  # the project's (config/__init__.py makes it)

    _import_tasks()
    default = str(app.conf.task_default_queue)
    found = {queue_of(app, name) for name in list(app.tasks) if not name.startswith("celery.")} - {
        default
    }
    return (default, *sorted(found))


def report_consumers(queues: list[str], worker: str) -> None:
    """`worker` consumes these queues now (one heartbeat; expires after three)."""
    client = get_redis()
    ttl_ms = max(1000, int(settings.QUEUE_HEARTBEAT_SECONDS * 3000))
    for queue in queues:
        client.set(consumer_key(queue), worker, px=ttl_ms)


def queues_without_consumer() -> list[str]:
    """The product's queues no worker reported consuming within three heartbeats (one MGET)."""
    queues = product_queues()
    found = get_redis().mget([consumer_key(queue) for queue in queues])
    return [queue for queue, worker in zip(queues, found, strict=True) if worker is None]


def degraded() -> str:
    """/healthz's `queues`: "" when every product queue has a consumer, else
    "no worker consumes: <queue>, <queue>" (their tasks wait; docs/operating/deploy.md)."""
    missing = queues_without_consumer()
    return f"{NO_CONSUMER}{', '.join(missing)}" if missing else ""


# --- In the worker ------------------------------------------------------------------------


def consume_every_product_queue(worker: Any) -> None:
    """Before a worker picks its queues (`celeryd_init`): every product queue is one it knows,
    so that without `-Q` it consumes them all (with `-Q` it still takes only those named)."""
    queues = worker.app.amqp.queues
    for name in product_queues():
        # select_add: one of the queues a worker consumes when no -Q selects others.
        queues.select_add(queues[name] if name in queues else queues.new_missing(name))


class _Heartbeat(threading.Thread):
    def __init__(self, consumer: Any) -> None:
        super().__init__(name="queue-heartbeat", daemon=True)
        self.consumer = consumer
        self.stopped = threading.Event()

    def queues(self) -> list[str]:
        task_consumer = getattr(self.consumer, "task_consumer", None)
        return [queue.name for queue in list(getattr(task_consumer, "queues", None) or [])]

    def run(self) -> None:
        while True:
            try:
                report_consumers(self.queues(), str(self.consumer.hostname))
            except Exception as exc:  # Redis away: the next heartbeat tries again
                logger.warning("Could not report the queues this worker consumes: %s", exc)
            if self.stopped.wait(settings.QUEUE_HEARTBEAT_SECONDS):
                return


_heartbeats: list[_Heartbeat] = []


def start_heartbeat(consumer: Any) -> None:
    """Once the worker consumes (`worker_ready`): report its queues now and every heartbeat."""
    heartbeat = _Heartbeat(consumer)
    _heartbeats.append(heartbeat)
    heartbeat.start()


def stop_heartbeats() -> None:
    """The worker stops (`worker_shutdown`); its reports expire after three heartbeats."""
    while _heartbeats:
        _heartbeats.pop().stopped.set()
