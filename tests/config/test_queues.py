"""The worker runs what SPEC 6 says (SPEC 10): `celery -A config worker` consumes every queue
the product's tasks go to, and /healthz says `degraded` and names the queues no worker consumes
(real workers, each in its own process: tests/workers.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.test import Client

from config import status
from config.celery import app
from tests.waiting import eventually
from tests.workers import worker_process

pytestmark = pytest.mark.django_db(transaction=True)

BASE_DIR = Path(django_settings.BASE_DIR)


@pytest.fixture(autouse=True)
def no_flags_of_earlier_tests():
    for name in list(status.degraded()):
        status.clear(name)


def queues_named(client: Client) -> set[str]:
    """The queues /healthz says no worker consumes."""
    detail = client.get("/healthz").json()["degraded"].get("queues", "")
    if not detail:
        return set()
    assert detail.startswith("no worker consumes: "), detail
    return set(detail.removeprefix("no worker consumes: ").split(", "))


def test_the_product_queues_are_every_queue_a_task_goes_to():
    from config.queues import product_queues, queue_of

    queues = product_queues()
    assert queues[0] == app.conf.task_default_queue == "celery"
    assert {"outbox", "push", "rules"} <= set(queues)
    assert queue_of(app, "outbox.tasks.deliver") == django_settings.OUTBOX_QUEUE
    assert queue_of(app, "push.tasks.push_alert") == "push"
    assert queue_of(app, "notifications.rules.tasks.dry_run_sql_rule") == "rules"
    assert queue_of(app, "outbox.tasks.pass_outbox") == "celery"


def test_healthz_names_the_queues_no_worker_consumes(client: Client):
    """Nothing consumes at first; a worker of the default queue only (as a deployment that
    started `worker -Q celery` and forgot the others) leaves the outbox, pushes and dry runs
    named; a worker started as SPEC 6 says consumes them all."""
    answer = client.get("/healthz")
    assert answer.status_code == 200  # requests are still served
    assert answer.json()["status"] == "degraded"
    assert queues_named(client) == {"celery", "outbox", "push", "rules"}

    with worker_process(queues=["celery"]):
        assert eventually(lambda: "celery" not in queues_named(client), timeout=20)
        assert queues_named(client) == {"outbox", "push", "rules"}

    with worker_process():  # `celery -A config worker`: no -Q
        assert eventually(lambda: client.get("/healthz").json()["status"] == "ok", timeout=20)


def workers_of(procfile: str) -> dict[str, set[str]]:
    """Each Celery worker line of the Procfile and the queues it consumes (without -Q: all)."""
    from config.queues import product_queues

    found: dict[str, set[str]] = {}
    for line in (BASE_DIR / procfile).read_text().splitlines():
        name, _, command = line.partition(":")
        words = command.split()
        if words[:4] == ["celery", "-A", "config", "worker"]:
            queues = words[words.index("-Q") + 1].split(",") if "-Q" in words else product_queues()
            found[name.strip()] = set(queues)
    return found


@pytest.mark.parametrize("procfile", ["Procfile", "Procfile.production"])
def test_every_procfile_consumes_every_queue(procfile):
    from config.queues import product_queues

    consumed = set().union(*workers_of(procfile).values())
    assert set(product_queues()) <= consumed


def test_production_keeps_what_waits_on_the_outside_apart_from_the_scheduled_passes():
    workers = workers_of("Procfile.production")
    assert workers["worker"] == {"celery"}
    assert workers["push_worker"] == {"push"}
    assert workers["outbox"] == {"outbox"}
    assert workers["rules"] == {"rules"}
