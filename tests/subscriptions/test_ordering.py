"""Writes of one (warehouse, type) are ordered: an older read of the database never lands after
a newer one, and the reconcile repairs everything publishing relies on."""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from subscriptions import keys, services, store
from subscriptions.models import Subscription
from subscriptions.store import Pair

pytestmark = pytest.mark.django_db(transaction=True)


def test_two_admins_saving_at_once_leave_the_newer_state(
    monkeypatch, warehouse, rep_notice, alice, bob, members
):
    """Alice's save reads the database, then stalls; Bob's save commits and mirrors meanwhile;
    Alice's stale copy (without Bob) must not overwrite his."""
    read_done, bob_done = threading.Event(), threading.Event()
    real_read = services.subscribers_from_database

    def read_then_stall(pairs=None):
        desired = real_read(pairs)
        if threading.current_thread().name == "alice-admin":
            read_done.set()
            assert bob_done.wait(10)
        return desired

    monkeypatch.setattr(services, "subscribers_from_database", read_then_stall)
    errors: list[BaseException] = []

    def alice_saves() -> None:
        try:
            Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, user=alice)
        except BaseException as exc:  # surfaced below: a thread's failure must fail the test
            errors.append(exc)
        finally:
            connection.close()

    alice_thread = threading.Thread(target=alice_saves, name="alice-admin")
    alice_thread.start()
    assert read_done.wait(10)
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, user=bob)
    bob_done.set()
    alice_thread.join(10)

    assert not alice_thread.is_alive()
    assert errors == []
    assert members(warehouse, rep_notice) == {f"u:{alice.pk}", f"u:{bob.pk}"}


def test_a_write_taken_before_a_later_one_is_refused(redis, warehouse, rep_notice, alice, members):
    pair = Pair(warehouse.pk, rep_notice.pk)
    early = store.take_versions([pair])
    late = store.take_versions([pair])

    assert store.replace_subscribers({pair: {f"u:{alice.pk}"}}, late) == {
        pair: store.Outcome.WRITTEN
    }
    assert store.replace_subscribers({pair: set()}, early) == {pair: store.Outcome.SUPERSEDED}
    assert members(warehouse, rep_notice) == {f"u:{alice.pk}"}


def test_a_write_whose_version_vanished_is_read_again_and_lands(
    redis, monkeypatch, warehouse, rep_notice, alice, members
):
    """Redis emptied between taking the version and writing: the writer starts over."""
    real_read = services.subscribers_from_database
    reads = []

    def read_then_redis_empties(pairs=None):
        reads.append(pairs)
        if len(reads) == 1:
            redis.flushall()
        return real_read(pairs)

    monkeypatch.setattr(services, "subscribers_from_database", read_then_redis_empties)
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, user=alice)

    assert len(reads) == 2
    assert members(warehouse, rep_notice) == {f"u:{alice.pk}"}


@pytest.mark.parametrize("lost", ["token", "set", "version"])
def test_the_reconcile_repairs_every_key_publishing_relies_on(
    redis, warehouse, rep_notice, role, alice, members, lost
):
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, role=role)
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, user=alice)
    pair = (warehouse.pk, rep_notice.pk)
    victim = {
        "token": keys.subscribers_token(*pair),
        "set": keys.subscribers(*pair),
        "version": keys.subscribers_version(*pair),
    }[lost]
    redis.delete(victim)

    report = services.reconcile()

    # The version counter alone is no fault: the next writer simply starts a new count.
    assert report.repaired == (0 if lost == "version" else 1)
    assert members(*pair) == {f"r:{role.pk}", f"u:{alice.pk}"}
    assert store.read_mirror([Pair(*pair)])[Pair(*pair)].whole
    assert services.reconcile().repaired == 0


def test_the_reconcile_marks_pairs_nobody_subscribed(redis, warehouse, rep_notice):
    redis.flushall()  # Redis lost the mirror of the new pair (it is written at its creation)
    assert redis.exists(keys.subscribers_token(warehouse.pk, rep_notice.pk)) == 0

    assert services.reconcile().repaired == 1
    assert redis.get(keys.subscribers_token(warehouse.pk, rep_notice.pk)).startswith(b"0:")


def test_a_pair_whose_warehouse_is_gone_is_forgotten_not_written(
    redis, warehouse, rep_notice, alice
):
    # E.g. a deleted warehouse's pairs, mirrored after the commit that deleted it.
    services.resync_pairs([Pair(warehouse.pk, rep_notice.pk)])
    gone = Pair(warehouse.pk + 1000, rep_notice.pk)
    redis.set(keys.subscribers_token(*gone), "0:stale")

    services.resync_pairs([gone])

    assert redis.keys(f"{keys.warehouse_prefix(gone.warehouse_id)}*") == []
    assert redis.get(keys.subscribers_token(warehouse.pk, rep_notice.pk))
