"""Every way a subscription changes reaches Redis after commit, and only after commit."""

import logging

import pytest
from django.contrib.auth.models import Group, User
from django.core.management import call_command
from django.db import IntegrityError, transaction

from subscriptions import keys, services
from subscriptions.models import MessageType, Subscription, Warehouse

pytestmark = pytest.mark.django_db(transaction=True)


def test_user_and_role_subscriptions_appear_in_the_set(warehouse, rep_notice, role, alice, members):
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, user=alice)
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, role=role)

    assert members(warehouse, rep_notice) == {f"u:{alice.pk}", f"r:{role.pk}"}


def test_each_change_rewrites_the_token(redis, warehouse, rep_notice, role, alice):
    token_key = keys.subscribers_token(warehouse.pk, rep_notice.pk)
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, user=alice)
    first = redis.get(token_key)
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, role=role)

    assert first is not None
    assert redis.get(token_key) not in (None, first)


def test_deleting_the_last_subscription_leaves_an_empty_set_marked_as_mirrored(
    redis, warehouse, rep_notice, alice, members
):
    sub = Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, user=alice)
    sub.delete()

    assert members(warehouse, rep_notice) == set()
    # "Nobody subscribed" is written down, so a missing token always means "not mirrored".
    token = redis.get(keys.subscribers_token(warehouse.pk, rep_notice.pk)).decode()
    assert token.startswith("0:")


def test_moving_a_subscription_updates_both_warehouses(
    warehouse, other_warehouse, rep_notice, alice, members
):
    sub = Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, user=alice)
    sub.warehouse = other_warehouse
    sub.save()

    assert members(warehouse, rep_notice) == set()
    assert members(other_warehouse, rep_notice) == {f"u:{alice.pk}"}


def test_changing_the_message_type_updates_both_sets(warehouse, rep_notice, alice, members):
    other_type = MessageType.objects.create(code="QC_ALERT", name="QC")
    sub = Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, user=alice)
    sub.message_type = other_type
    sub.save()

    assert members(warehouse, rep_notice) == set()
    assert members(warehouse, other_type) == {f"u:{alice.pk}"}


def test_rolled_back_changes_never_reach_redis(warehouse, rep_notice, alice, bob, members):
    kept = Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, user=alice)

    def change_then_fail() -> None:
        with transaction.atomic():
            Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, user=bob)
            kept.delete()
            assert members(warehouse, rep_notice) == {f"u:{alice.pk}"}, "not before commit"
            raise RuntimeError("roll back")

    with pytest.raises(RuntimeError, match="roll back"):
        change_then_fail()

    assert members(warehouse, rep_notice) == {f"u:{alice.pk}"}
    # A later commit must not resurrect the rolled-back change either.
    other_role = Group.objects.create(name="x")
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, role=other_role)
    assert f"u:{bob.pk}" not in members(warehouse, rep_notice)
    assert f"u:{alice.pk}" in members(warehouse, rep_notice)


def test_changes_inside_a_transaction_wait_for_commit(warehouse, rep_notice, alice, members):
    with transaction.atomic():
        Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, user=alice)
        assert members(warehouse, rep_notice) == set()
    assert members(warehouse, rep_notice) == {f"u:{alice.pk}"}


def test_a_new_warehouse_or_type_is_mirrored_empty_after_commit(redis, warehouse, rep_notice):
    def tokens() -> list[bytes | None]:
        new_pairs = ((warehouse, qc), (new_warehouse, rep_notice), (new_warehouse, qc))
        return [redis.get(keys.subscribers_token(w.pk, t.pk)) for w, t in new_pairs]

    with transaction.atomic():
        qc = MessageType.objects.create(code="QC_ALERT", name="QC")
        new_warehouse = Warehouse.objects.create(code="GZ03", name="Guangzhou 3")
        assert tokens() == [None, None, None], "not before commit"

    # "No token" keeps meaning "Redis lost it": every pair of the new rows is marked mirrored.
    assert all(token is not None and token.startswith(b"0:") for token in tokens())


@pytest.mark.parametrize("victim", ["user", "role", "warehouse", "message_type"])
def test_cascading_deletes_empty_the_sets(victim, warehouse, rep_notice, role, alice, members):
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, user=alice)
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, role=role)
    pair = (warehouse.pk, rep_notice.pk)
    expected = {"user": {f"r:{role.pk}"}, "role": {f"u:{alice.pk}"}}.get(victim, set())
    objects = {"user": alice, "role": role, "warehouse": warehouse, "message_type": rep_notice}
    objects[victim].delete()

    assert members(*pair) == expected


def test_queryset_delete_mirrors_every_row(warehouse, other_warehouse, rep_notice, alice, members):
    for wh in (warehouse, other_warehouse):
        Subscription.objects.create(message_type=rep_notice, warehouse=wh, user=alice)
    Subscription.objects.filter(user=alice).delete()

    assert members(warehouse, rep_notice) == set()
    assert members(other_warehouse, rep_notice) == set()


def test_bulk_subscribe_creates_every_combination_once(
    warehouse, other_warehouse, rep_notice, role, alice, members
):
    qc = MessageType.objects.create(code="QC_ALERT", name="QC")
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, role=role)

    result = services.subscribe_many(
        message_types=[rep_notice, qc],
        warehouses=[warehouse, other_warehouse],
        roles=[role],
        users=[alice],
    )

    assert (result.created, result.existing) == (7, 1)
    assert Subscription.objects.count() == 8
    for wh in (warehouse, other_warehouse):
        for mt in (rep_notice, qc):
            assert members(wh, mt) == {f"r:{role.pk}", f"u:{alice.pk}"}


def test_database_constraints_refuse_bad_rows(warehouse, rep_notice, role, alice):
    with pytest.raises(IntegrityError), transaction.atomic():
        Subscription.objects.create(message_type=rep_notice, warehouse=warehouse)
    with pytest.raises(IntegrityError), transaction.atomic():
        Subscription.objects.create(
            message_type=rep_notice, warehouse=warehouse, user=alice, role=role
        )
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, user=alice)
    with pytest.raises(IntegrityError), transaction.atomic():
        Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, user=alice)


def test_sync_command_rebuilds_after_flushall(
    redis, warehouse, other_warehouse, rep_notice, role, alice, members, capsys
):
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, role=role)
    Subscription.objects.create(message_type=rep_notice, warehouse=other_warehouse, user=alice)
    redis.flushall()
    # A stray member that the database does not know must go too.
    redis.sadd(keys.subscribers(warehouse.pk, rep_notice.pk), "u:999")

    call_command("sync_subscriptions")

    out = capsys.readouterr().out
    assert "2 subscriptions in 2 Redis sets across 2 warehouses" in out
    assert members(warehouse, rep_notice) == {f"r:{role.pk}"}
    assert members(other_warehouse, rep_notice) == {f"u:{alice.pk}"}


def test_reconcile_rewrites_only_what_differs(
    redis, warehouse, other_warehouse, rep_notice, role, members
):
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, role=role)
    Subscription.objects.create(message_type=rep_notice, warehouse=other_warehouse, role=role)
    untouched_token = redis.get(keys.subscribers_token(other_warehouse.pk, rep_notice.pk))
    redis.delete(keys.subscribers(warehouse.pk, rep_notice.pk))

    report = services.reconcile()

    assert report.repaired == 1
    assert members(warehouse, rep_notice) == {f"r:{role.pk}"}
    assert redis.get(keys.subscribers_token(other_warehouse.pk, rep_notice.pk)) == untouched_token
    assert services.reconcile().repaired == 0


def test_redis_down_keeps_the_database_change_and_reconcile_repairs_it(
    redis_server, warehouse, rep_notice, alice, members, caplog
):
    redis_server.stop()
    with caplog.at_level(logging.WARNING, logger="subscriptions.services"):
        Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, user=alice)
    assert "left to reconcile" in caplog.text
    assert Subscription.objects.count() == 1
    redis_server.restart()

    assert services.reconcile().repaired == 1
    assert members(warehouse, rep_notice) == {f"u:{alice.pk}"}


def test_sync_command_reports_redis_down_without_traceback(warehouse, rep_notice, redis_down):
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="Redis is unreachable"):
        call_command("sync_subscriptions")


def test_deleting_a_user_with_many_subscriptions(warehouse, rep_notice, members):
    users = [User.objects.create(username=f"op{i}") for i in range(5)]
    for user in users:
        Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, user=user)
    users[0].delete()

    assert members(warehouse, rep_notice) == {f"u:{u.pk}" for u in users[1:]}
