"""Two beats started by mistake: each periodic task still runs once per tick."""

from __future__ import annotations

import threading

from django.conf import settings
from django.db import connection

from config.beat import claim_tick, tick_key
from config.beat_schedule import TICK_HEADER
from messaging.tasks import drop_idle_chats
from rules.tasks import run_due_rules
from tests.waiting import eventually


def run_concurrently(task, headers: dict | None, times: int = 2) -> list:
    """Run the task body `times` times at once, as workers given each beat's message would."""
    barrier = threading.Barrier(times)
    results: list = [None] * times

    def worker(i: int) -> None:
        barrier.wait()
        try:
            results[i] = task.apply(headers=headers).get()
        finally:
            connection.close()  # each thread has its own database connection

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(times)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def test_every_beat_entry_carries_its_interval_and_keeps_its_task():
    for name, entry in settings.CELERY_BEAT_SCHEDULE.items():
        assert entry["options"]["headers"][TICK_HEADER] == float(entry["schedule"]), name
        assert not entry["task"].startswith("config."), name


def test_two_beats_messages_for_one_tick_run_the_task_once(db, redis):
    results = run_concurrently(drop_idle_chats, {TICK_HEADER: 3600.0})

    assert sorted(results, key=str) == [{"dropped": 0}, {"skipped": "this tick already ran"}]
    assert 0 < redis.pttl(tick_key(drop_idle_chats.name)) <= 3600 * 900


def test_calls_not_sent_by_beat_always_run(db):
    results = run_concurrently(run_due_rules, headers=None)
    assert all("rules" in result for result in results)


def test_the_next_tick_runs_again_once_the_claim_lapses(redis):
    assert claim_tick("demo.task", interval_seconds=1)
    assert not claim_tick("demo.task", interval_seconds=1)
    assert eventually(lambda: claim_tick("demo.task", interval_seconds=1), timeout=5)
