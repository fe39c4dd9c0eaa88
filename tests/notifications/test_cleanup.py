"""Nothing left behind: notification data of deleted warehouses, users, roles, message types
and rules is removed on delete and by the orphan sweep (issue 9.4)."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.core.management import call_command

from config.celery import app
from notifications import cleanup, keys, tasks
from notifications.services import mark_read, publish
from rules import keys as rule_keys
from rules import store as rules_store
from subscriptions import keys as subscription_keys
from subscriptions.models import MessageType, Subscription

pytestmark = pytest.mark.django_db


def warehouse_keys(redis, warehouse_id: int) -> set[str]:
    return {k.decode() for k in redis.scan_iter(match=f"wms:\\{{wh:{warehouse_id}\\}}:*")}


@pytest.fixture
def ulla(warehouse, rep_notice, make_user, django_capture_on_commit_callbacks):
    """A user subscribed in person (her own inbox) to REP_NOTICE in SH01."""
    user = make_user("ulla")
    with django_capture_on_commit_callbacks(execute=True):
        Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, user=user)
    return user


@pytest.fixture
def busy(
    warehouse,
    other_warehouse,
    rep_notice,
    role,
    make_user,
    ulla,
    redis,
    django_capture_on_commit_callbacks,
):
    """Both warehouses with every family of keys: subscriber sets, notifications, inboxes,
    read marks, readers, and a rule's de-duplication marks."""
    rita = make_user("rita", role)
    with django_capture_on_commit_callbacks(execute=True):
        for wh in (warehouse, other_warehouse):
            Subscription.objects.create(message_type=rep_notice, warehouse=wh, role=role)
    for wh in (warehouse, other_warehouse):
        note = publish(message_type=rep_notice, warehouse=wh, title="Replenish A-01-03")
        mark_read(user=rita, warehouse_id=wh.pk, ids=[note.id])
        rules_store.claim_due(
            "py:negative_bin_stock",
            now_ms=1,
            cooldown_seconds=60,
            abandoned_seconds=60,
            keys_by_warehouse={wh.pk: ["A-01-03"]},
        )
    mark_read(user=ulla, warehouse_id=warehouse.pk, ids=None)
    return rita


def test_deleting_a_warehouse_removes_every_key_of_it_after_commit(
    warehouse, other_warehouse, busy, redis, celery_eager, django_capture_on_commit_callbacks
):
    assert len(warehouse_keys(redis, warehouse.pk)) >= 10
    kept = warehouse_keys(redis, other_warehouse.pk)
    warehouse_id = warehouse.pk

    with django_capture_on_commit_callbacks(execute=True):
        warehouse.delete()

    assert warehouse_keys(redis, warehouse_id) == set()
    assert warehouse_keys(redis, other_warehouse.pk) == kept


def test_a_warehouse_the_database_still_has_is_not_purged(warehouse, busy, redis):
    before = warehouse_keys(redis, warehouse.pk)
    assert cleanup.warehouse_purge(warehouse.pk) == cleanup.CleanupReport()
    assert warehouse_keys(redis, warehouse.pk) == before


def test_the_sweep_finds_the_keys_of_a_warehouse_deleted_without_its_task(
    warehouse, other_warehouse, busy, redis
):
    kept = warehouse_keys(redis, other_warehouse.pk)
    warehouse_id = warehouse.pk
    warehouse.delete()  # its after-commit task never runs here: only the sweep is left

    report = cleanup.sweep_orphans(batch=3)  # many small SCAN steps

    assert report.warehouses == 1
    assert report.keys >= 10
    assert warehouse_keys(redis, warehouse_id) == set()
    assert warehouse_keys(redis, other_warehouse.pk) == kept
    assert cleanup.sweep_orphans() == cleanup.CleanupReport()


def test_deleting_a_user_removes_their_inbox_and_keeps_colleagues_reads(
    warehouse, busy, ulla, redis, celery_eager, django_capture_on_commit_callbacks
):
    own = {keys.inbox(warehouse.pk, f"u:{ulla.pk}")}
    assert own <= warehouse_keys(redis, warehouse.pk)
    with django_capture_on_commit_callbacks(execute=True):
        ulla.delete()

    assert not own & warehouse_keys(redis, warehouse.pk)
    # Colleagues keep theirs (a user's reads of single notifications go with those).
    assert any(f.startswith(f"{busy.pk}:".encode()) for f in redis.hkeys(keys.reads(warehouse.pk)))


def test_deleting_a_user_removes_their_fields_in_the_read_models_shared_hashes(
    warehouse, busy, ulla, redis, celery_eager, django_capture_on_commit_callbacks
):
    # busy: rita marked one notification read (read counts); ulla marked all (a watermark).
    def fields_of(user_id: int) -> set[bytes]:
        mine = set()
        for field in redis.hkeys(keys.users(warehouse.pk)):
            name = field.decode()
            owner = name.split(":")[1] if name[:2] in ("v:", "s:", "w:", "o:") else name
            if owner == str(user_id):
                mine.add(field)
        return mine

    rita_id, ulla_id = busy.pk, ulla.pk
    assert fields_of(rita_id)
    assert fields_of(ulla_id)
    with django_capture_on_commit_callbacks(execute=True):
        busy.delete()
        ulla.delete()

    assert fields_of(rita_id) == set()
    assert fields_of(ulla_id) == set()


def test_the_sweep_also_removes_a_deleted_users_read_model_fields(warehouse, busy, redis):
    rita_id = busy.pk
    busy.delete()  # no commit in this test: the delete hook never ran, the sweep must find it

    cleanup.sweep_orphans()

    names = [
        f.decode().removeprefix("v:").removeprefix("o:")
        for f in redis.hkeys(keys.users(warehouse.pk))
    ]
    assert str(rita_id) not in [name.split(":")[0] for name in names]


def test_the_sweep_removes_what_deleted_users_roles_types_and_rules_left(
    warehouse, other_warehouse, busy, ulla, role, rep_notice, redis
):
    """Deleted in ways whose after-commit tasks never run, so only the sweep can find them."""
    ulla_id = ulla.pk
    ulla.delete()
    role_id = role.pk
    role.delete()
    stale_type = MessageType.objects.create(code="GONE", name="Gone", default_ttl_seconds=60)
    gone_set = subscription_keys.subscribers(warehouse.pk, stale_type.pk)
    redis.sadd(gone_set, "u:1")
    gone_token = subscription_keys.subscribers_token(warehouse.pk, stale_type.pk)
    redis.set(gone_token, "t")
    stale_type.delete()
    rules_store.claim_due(
        "py:removed_from_the_code",
        now_ms=1,
        cooldown_seconds=60,
        abandoned_seconds=60,
        keys_by_warehouse={warehouse.pk: ["x"]},
    )
    live_rule = rule_keys.rule_sent(warehouse.pk, "py:negative_bin_stock")
    before = warehouse_keys(redis, warehouse.pk)

    report = cleanup.sweep_orphans()

    removed = before - warehouse_keys(redis, warehouse.pk)
    assert removed == {
        keys.inbox(warehouse.pk, f"u:{ulla_id}"),
        keys.inbox(warehouse.pk, f"r:{role_id}"),
        gone_set,
        gone_token,
        rule_keys.rule_sent(warehouse.pk, "py:removed_from_the_code"),
    }
    assert report.keys == len(removed) + 1  # the deleted role's inbox in BJ02 too
    assert redis.exists(live_rule)


def test_beat_runs_the_notification_orphan_sweep(warehouse, busy, redis, celery_eager):
    entry = settings.CELERY_BEAT_SCHEDULE["sweep-notification-orphans"]
    assert entry["task"] == tasks.sweep_notification_orphans.name in app.tasks
    assert entry["schedule"] <= 24 * 3600
    warehouse_id = warehouse.pk
    warehouse.delete()
    assert tasks.sweep_notification_orphans.delay().get()["warehouses"] == 1
    assert warehouse_keys(redis, warehouse_id) == set()


def test_the_command_runs_every_orphan_sweep_and_says_what_it_did(warehouse, busy, redis, capsys):
    warehouse.delete()
    call_command("sweep_orphans", "--batch", "5")
    out = capsys.readouterr().out
    assert "Notifications: removed" in out
    assert "of 1 deleted warehouses" in out
    assert "Chats: 0 chats checked" in out
    assert "Rules: removed 0 last runs of deleted rules" in out
    assert "Orphan sweep done." in out
