"""Publishing: atomic fan-out into subscriber inboxes, content stored once, clear errors."""

import pytest
from django.contrib.auth.models import Group

from notifications import keys, store
from notifications.selectors import inbox_page
from notifications.services import PublishError, publish
from subscriptions.models import Subscription, subscriber_id
from tests.redis_commands import commands_of

pytestmark = pytest.mark.django_db(transaction=True)


def test_delivers_to_each_subscribed_user_and_role(redis, warehouse, rep_notice, role, alice, send):
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, role=role)
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, user=alice)

    result = send(body="Stock is -12 after wave 8812", data={"bin": "A-01-03", "qty": -12})

    assert result.recipients == 2
    for subscriber in (f"u:{alice.pk}", f"r:{role.pk}"):
        assert redis.zscore(keys.inbox(warehouse.pk, subscriber), result.cursor) == result.cursor


def test_content_is_stored_once_however_many_inboxes(redis, warehouse, rep_notice, make_user, send):
    for i in range(5):
        Subscription.objects.create(
            message_type=rep_notice, warehouse=warehouse, user=make_user(f"op{i}")
        )

    result = send(body="x" * 1000)

    assert result.recipients == 5
    assert redis.hlen(keys.contents(warehouse.pk)) == 1
    # An inbox entry is only the cursor, never a copy of the content.
    first = Subscription.objects.first()
    assert first is not None
    assert first.user_id is not None
    inbox = keys.inbox(warehouse.pk, subscriber_id(user_id=first.user_id))
    assert redis.zrange(inbox, 0, -1) == [str(result.cursor).encode()]


def test_publish_accepts_codes_ids_and_instances(warehouse, rep_notice, replenishers):
    by_code = publish(message_type="REP_NOTICE", warehouse="SH01", title="a")
    by_id = publish(message_type="REP_NOTICE", warehouse=warehouse.pk, title="b")
    by_instance = publish(message_type=rep_notice, warehouse=warehouse, title="c")

    assert [r.recipients for r in (by_code, by_id, by_instance)] == [1, 1, 1]


def test_ttl_defaults_to_the_message_types(warehouse, replenishers, send):
    rita, _ = replenishers
    default = send()
    explicit = send(ttl_seconds=60)

    items = inbox_page(user=rita, warehouse_id=warehouse.pk).items
    page = {i.notification.id: i.notification for i in items}
    assert page[default.id].expires_at_ms - page[default.id].created_at_ms == 3600 * 1000
    assert page[explicit.id].expires_at_ms - page[explicit.id].created_at_ms == 60 * 1000


def test_zero_subscribers_is_not_an_error(redis, warehouse, rep_notice, send):
    result = send()

    assert result.recipients == 0
    assert redis.hlen(keys.contents(warehouse.pk)) == 0


def test_a_subscriber_added_between_publishes_receives_the_next(
    warehouse, rep_notice, role, alice, send
):
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, role=role)
    assert send().recipients == 1  # the process now caches {role}
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, user=alice)

    result = send()

    assert result.recipients == 2
    assert [i.notification.id for i in inbox_page(user=alice, warehouse_id=warehouse.pk).items] == [
        result.id
    ]


def test_a_removed_subscriber_receives_nothing_more(warehouse, rep_notice, alice, send):
    sub = Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, user=alice)
    send()
    sub.delete()

    assert send().recipients == 0
    assert len(inbox_page(user=alice, warehouse_id=warehouse.pk).items) == 1


@pytest.mark.single_redis  # reads one server's command stats
def test_steady_state_publish_is_one_round_trip(redis, replenishers, send):
    send()  # warms this process's subscriber cache
    before = _evalsha_calls(redis)
    send()
    send()

    assert _evalsha_calls(redis) - before == 2


def test_an_emptied_redis_is_not_fooled_by_a_stale_cache(
    redis, warehouse, rep_notice, role, alice, send
):
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, role=role)
    send()
    redis.flushall()  # token gone: the cached list must not be trusted, nor "nobody" believed

    assert send().subscribers == (f"r:{role.pk}",)
    store.subscriber_cache.put((warehouse.pk, rep_notice.pk), "forged", [f"u:{alice.pk}"])
    assert send().subscribers == (f"r:{role.pk}",)
    assert redis.zcard(keys.inbox(warehouse.pk, f"u:{alice.pk}")) == 0


def test_cursors_increase_within_the_same_millisecond(monkeypatch, replenishers, send):
    from config import timestamps

    monkeypatch.setattr(timestamps, "now_ms", lambda: 1_800_000_000_000)
    cursors = [send(title=str(i)).cursor for i in range(50)]

    assert cursors == sorted(set(cursors))
    assert cursors[0] == 1_800_000_000_000 * 1024


@pytest.mark.parametrize(
    ("kwargs", "field", "message"),
    [
        ({"message_type": "NOPE"}, "message_type", "Unknown message type 'NOPE'."),
        ({"warehouse": 999}, "warehouse", "Unknown warehouse 999."),
        ({"warehouse": "XX99"}, "warehouse", "Unknown warehouse 'XX99'."),
        ({"title": "  "}, "title", "A title is required."),
        ({"title": "t" * 201}, "title", "The title is longer than 200 characters."),
        ({"body": "b" * 4001}, "body", "The body is longer than 4000 characters."),
        ({"data": ["not", "an", "object"]}, "data", "data must be a JSON object."),
        ({"data": {"blob": "x" * 9000}}, "data", "limit is 8192"),
        ({"ttl_seconds": 0}, "ttl_seconds", "ttl_seconds must be a whole number"),
    ],
)
def test_invalid_input_raises_a_clear_error_and_writes_nothing(
    redis, replenishers, send, kwargs, field, message
):
    with pytest.raises(PublishError) as caught:
        send(**kwargs)

    assert caught.value.field == field
    assert message in caught.value.message
    assert redis.keys("wms:{wh:*}:notes") == []


def test_inactive_type_and_warehouse_are_refused(warehouse, rep_notice, replenishers, send):
    rep_notice.is_active = False
    rep_notice.save()
    with pytest.raises(PublishError, match="Message type 'REP_NOTICE' is inactive"):
        send()
    rep_notice.is_active = True
    rep_notice.save()
    warehouse.is_active = False
    warehouse.save()
    with pytest.raises(PublishError, match="Warehouse SH01 is inactive"):
        send()


def test_every_inbox_gets_it_or_none_does(redis, warehouse, rep_notice, make_user, send):
    roles = [Group.objects.create(name=f"g{i}") for i in range(3)]
    for group in roles:
        Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, role=group)
    # A key of the wrong type makes the script fail on the last inbox: nothing may remain.
    redis.set(keys.inbox(warehouse.pk, f"r:{roles[-1].pk}"), "not a sorted set")

    with pytest.raises(Exception, match="WRONGTYPE"):
        send()

    assert redis.hlen(keys.contents(warehouse.pk)) == 0
    assert redis.exists(keys.sequence(warehouse.pk)) == 0
    for group in roles[:-1]:
        assert redis.zcard(keys.inbox(warehouse.pk, f"r:{group.pk}")) == 0


def _evalsha_calls(redis) -> int:
    stats = redis.info("commandstats")
    return stats.get("cmdstat_evalsha", {}).get("calls", 0)


# What a steady publish runs besides one ZADD per inbox (INFO commandstats counts what its script
# runs, and the EVALSHA): 11 TYPEs (nothing is written unless every key it writes has its type),
# the directory's version, the subscribers' token and the cursor read and set, the content, id,
# route, flags, place and expiry written, the class's tallies and count, the open index, the
# noise log and snapshot, today's two report counts and their expiry, the streams' event. 39
# before the script stopped reading back the place it had just written (twice).
PUBLISH_FIXED_COMMANDS = 37


@pytest.mark.single_redis
def test_a_steady_publish_runs_a_zadd_per_inbox_and_a_fixed_few_commands(
    redis, warehouse, rep_notice, make_user, send
):
    for i in range(5):
        Subscription.objects.create(
            message_type=rep_notice, warehouse=warehouse, user=make_user(f"op{i}")
        )
    for i in range(3):  # steady: the subscribers held, their class and today's reports made
        send(title=f"n{i}")

    result, spent = commands_of(redis, lambda: send(title="counted"))

    assert result.recipients == 5
    report = str(dict(spent.most_common()))
    assert spent["evalsha"] == 1, report  # one round trip
    assert spent["zadd"] == 5 + 2, report  # the inboxes, the expiry index and the open index
    assert spent.total() - 5 <= PUBLISH_FIXED_COMMANDS, report


def test_steady_state_publish_queries_no_database(warehouse, rep_notice, replenishers, send):
    """The message type and the warehouse come from the directory's cache (issue 22)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    send()  # fills it
    with CaptureQueriesContext(connection) as queries:
        send()
        publish(message_type=rep_notice.code, warehouse=warehouse.code, title="by code")
    assert len(queries) == 0, [q["sql"] for q in queries]

    rep_notice.is_active = False
    rep_notice.save()  # seen at once
    with pytest.raises(PublishError, match="inactive"):
        send()
