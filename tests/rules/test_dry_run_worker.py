"""Issue row F: a dry run pressed in the admin runs in a real Celery worker, never in the web
request (two presses on a slow rule used to hold both gunicorn workers for 10 s)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

import pytest
from celery.contrib.testing.worker import start_worker
from django.db import OperationalError

from config.celery import app
from inventory.models import Bin
from rules import sql
from rules.models import SqlRule
from tests.waiting import eventually

# The worker runs in a thread of this process and sees committed rows only.
pytestmark = pytest.mark.django_db(transaction=True)

CHANGELIST = "/admin/rules/sqlrule/"
# Allowed, and endless: it runs until the time limit stops it.
ENDLESS = (
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) "
    "SELECT 1 AS warehouse_id, 'x' AS title, count(*) AS body FROM n"
)

T = TypeVar("T")

# The Django test client serves requests in the test's own thread.
REQUEST_THREAD = threading.current_thread().name


@pytest.fixture
def queries_ran_in(monkeypatch) -> list[str]:
    """The names of the threads that ran a rule's query, in order."""
    threads: list[str] = []
    real = sql.run_query

    def spy(*args, **kwargs):
        threads.append(threading.current_thread().name)
        return real(*args, **kwargs)

    monkeypatch.setattr(sql, "run_query", spy)
    return threads


def unless_locked(read: Callable[[], T], otherwise: T) -> T:
    """`read()`, or `otherwise` while the test database refuses it. The worker thread and the
    test share an in-memory SQLite database, whose shared cache answers "database table is
    locked" at once while the other thread writes the table (a server's database waits)."""
    try:
        return read()
    except OperationalError as exc:
        if "locked" not in str(exc):
            raise
        return otherwise


def rules_worker():
    """A real worker consuming the default queue and the rules queue, as the demo's does."""
    return start_worker(
        app,
        pool="solo",
        queues=["celery", "rules"],
        perform_ping_check=False,
        shutdown_timeout=10,
    )


def test_the_press_returns_at_once_and_the_worker_runs_the_slow_query(
    admin_client, sql_rule, settings, queries_ran_in
):
    settings.RULES_SQL_TIMEOUT_SECONDS = 3
    rule = sql_rule(ENDLESS, is_active=False, clean=False)

    with rules_worker():
        response = admin_client.post(
            CHANGELIST, {"action": "dry_run", "_selected_action": [rule.pk]}
        )
        assert REQUEST_THREAD not in queries_ran_in  # the web request never ran the rule's SQL
        assert response.status_code == 302, response.content.decode()[:500]
        result_page = response["Location"]

        def shown() -> str:
            return unless_locked(lambda: admin_client.get(result_page).content.decode(), "")

        unfinished = ("Waiting for a worker", "Running since")
        assert eventually(lambda: any(words in shown() for words in unfinished))
        assert eventually(
            lambda: "The query ran longer than the limit of 3 s" in shown(), timeout=60
        )

    assert len(queries_ran_in) == 1  # once, in the worker
    assert REQUEST_THREAD not in queries_ran_in
    assert 'http-equiv="refresh"' not in shown()  # finished: the page stops reloading


def test_a_dry_run_passed_in_the_worker_lets_the_rule_be_activated(
    admin_client, sql_rule, warehouse, queries_ran_in
):
    Bin.objects.create(warehouse=warehouse, code="A-01-03", stock=-12, last_wave=8812)
    Bin.objects.create(warehouse=warehouse, code="A-01-04", stock=-2, last_wave=8812)
    rule = sql_rule(is_active=False)

    with rules_worker():
        response = admin_client.post(f"{CHANGELIST}{rule.pk}/dry-run/")  # the rule page's button
        assert REQUEST_THREAD not in queries_ran_in
        assert response.status_code == 302, response.content.decode()[:500]
        result_page = response["Location"]
        assert eventually(
            lambda: unless_locked(
                lambda: (
                    "2 alerts: 2 would be sent" in admin_client.get(result_page).content.decode()
                ),
                False,
            ),
            timeout=20,
        )

    page = admin_client.get(result_page).content.decode()
    assert "Replenish A-01-03" in page
    assert "Passed" in page
    assert queries_ran_in == [queries_ran_in[0]]
    assert REQUEST_THREAD not in queries_ran_in
    admin_client.post(CHANGELIST, {"action": "activate", "_selected_action": [rule.pk]})
    assert SqlRule.objects.get(pk=rule.pk).is_active


def test_run_now_runs_in_the_worker_and_records_the_run(
    admin_client, sql_rule, warehouse, queries_ran_in
):
    Bin.objects.create(warehouse=warehouse, code="A-01-03", stock=-12, last_wave=8812)
    rule = sql_rule()

    with rules_worker():
        response = admin_client.post(
            CHANGELIST, {"action": "run_now", "_selected_action": [rule.pk]}
        )
        assert REQUEST_THREAD not in queries_ran_in  # the web request never ran the rule's SQL
        assert response.status_code == 302
        assert eventually(
            lambda: unless_locked(
                lambda: SqlRule.objects.get(pk=rule.pk).last_result_count == 1, False
            ),
            timeout=20,
        )

    assert queries_ran_in == [queries_ran_in[0]]
    assert REQUEST_THREAD not in queries_ran_in
