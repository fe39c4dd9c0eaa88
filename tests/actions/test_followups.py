"""Reminders until claimed and the e-mail when nobody claims it (SPEC 14): from the reminders
index, bounded per beat tick, pushed (a real HTTPS push service) and e-mailed (a real SMTP
server) through the outbox."""

from __future__ import annotations

import datetime as dt

import pytest
from django.contrib.auth.models import Group

from actions import followups
from devredis import embedded_redis
from notifications import keys, lifecycle
from outbox import services as outbox
from outbox.models import OutboxMessage
from shifts.models import Shift

pytestmark = pytest.mark.django_db

NOON = int(dt.datetime(2026, 11, 23, 12, 0, tzinfo=dt.UTC).timestamp() * 1000)
S = 1000


@pytest.fixture
def supervisors(rep_notice, make_user) -> Group:
    """Supervisors, REP_NOTICE's escalation role, e-mailed after 300 s: sam has an address."""
    group = Group.objects.create(name="Supervisors")
    rep_notice.email_after_seconds, rep_notice.escalation_role = 300, group
    rep_notice.save()
    make_user("sam", group, email="sam@example.com")
    return group


@pytest.fixture
def at_noon(clock):
    clock.stop_at(NOON)
    return clock


def history(rita, warehouse, notification_id) -> list[dict]:
    found = lifecycle.peek(user=rita, warehouse_id=warehouse.pk, notification_id=notification_id)
    from notifications import selectors

    events = selectors.history(
        user=rita, warehouse_id=warehouse.pk, notification_id=found.notification.id
    )
    assert events is not None
    return [{"event": e.event, "recipients": e.recipients} for e in events]


def test_reminders_come_every_interval_until_the_most_then_stop(
    at_noon,
    replenishers,
    warehouse,
    rep_notice,
    send,
    celery_eager,
    browser_at,
    subscribe,
    push_service,
):
    rep_notice.remind_every_seconds, rep_notice.remind_max = 60, 2
    rep_notice.save()
    rita, _ = replenishers
    subscribe(rita, browser_at("rita-phone"), warehouse)
    sent = send()

    def tick(seconds: int) -> int:
        return followups.pass_all(at_ms=NOON + seconds * S)["reminded"]

    assert [tick(59), tick(60), tick(61), tick(119), tick(120), tick(600)] == [0, 1, 0, 0, 1, 0]
    events = [e["event"] for e in history(rita, warehouse, sent.id)]
    assert events == ["published", "reminded", "reminded"]
    assert len(push_service.to("rita-phone")) == 2  # Web Push again, each time
    assert not (followups.lifecycle_store.get_redis().zcard(keys.reminders(warehouse.pk)))


def test_a_claim_ends_the_reminders_and_the_email(
    at_noon, replenishers, warehouse, rep_notice, send, smtp
):
    rep_notice.remind_every_seconds, rep_notice.email_after_seconds = 60, 300
    rep_notice.save()
    rita, _ = replenishers
    rita.email = "rita@example.com"
    rita.save()
    sent = send()
    lifecycle.claim(user=rita, warehouse_id=warehouse.pk, notification_id=sent.id)

    assert followups.pass_all(at_ms=NOON + 3600 * S) == {"reminded": 0, "emailed": 0}
    assert [e["event"] for e in history(rita, warehouse, sent.id)] == ["published", "claimed"]
    assert not OutboxMessage.objects.exists()


def test_a_beat_tick_does_a_bounded_amount(
    at_noon, replenishers, warehouse, rep_notice, send, settings
):
    rep_notice.remind_every_seconds, rep_notice.remind_max = 60, 1
    rep_notice.save()
    settings.ALERT_REMINDER_BATCH, settings.ALERT_REMINDER_BATCHES = 2, 2
    for n in range(5):
        send(f"Replenish A-01-0{n}")

    assert followups.pass_all(at_ms=NOON + 60 * S)["reminded"] == 4  # two calls of two
    assert followups.pass_all(at_ms=NOON + 61 * S)["reminded"] == 1


def test_one_script_call_reads_at_most_25_entries_and_a_tick_1000(at_noon, warehouse, monkeypatch):
    """Each Redis call of a tick does a small, fixed amount of work (row 18: its slowest call
    within 5 ms whatever the number of open alerts), and a tick still takes up to 1,000 due
    entries, in 40 calls. Entries of alerts that are gone are read and dropped."""
    reads: list[int] = []
    run_followups = followups.lifecycle_store.run_followups

    def counted(*args, **kwargs):
        read, found = run_followups(*args, **kwargs)
        reads.append(read)
        return read, found

    monkeypatch.setattr(followups.lifecycle_store, "run_followups", counted)
    index = keys.reminders(warehouse.pk)
    redis = followups.lifecycle_store.get_redis()
    redis.zadd(index, {f"r0:gone-{n}": NOON - n for n in range(1010)})

    followups.pass_warehouse(warehouse.pk, at_ms=NOON)

    assert reads == [25] * 40
    assert redis.zcard(index) == 10  # the rest wait for the next tick
    reads.clear()
    followups.pass_warehouse(warehouse.pk, at_ms=NOON)
    assert reads == [10]
    assert redis.zcard(index) == 0


def test_nobody_claims_it_the_escalation_role_on_shift_is_emailed_once(
    at_noon, replenishers, warehouse, send, smtp, make_user, supervisors
):
    make_user("sid", supervisors)  # no address
    make_user("tom", supervisors, email="tom@example.com", is_active=False)
    rita, _ = replenishers
    sent = send()

    assert followups.pass_all(at_ms=NOON + 299 * S)["emailed"] == 0
    assert followups.pass_all(at_ms=NOON + 300 * S)["emailed"] == 1
    assert followups.pass_all(at_ms=NOON + 900 * S)["emailed"] == 0  # once
    [message] = OutboxMessage.objects.filter(kind="email")
    assert message.payload["to"] == ["sam@example.com"]

    assert outbox.deliver(str(message.pk)) == "succeeded"

    [mail] = smtp.messages
    assert smtp.envelopes == [["sam@example.com"]]
    assert "Replenish A-01-03" in mail["Subject"]
    assert "SH01" in mail["Subject"]
    assert mail["Message-ID"] == f"<{message.pk}@wms-notify>"
    assert "Replenish A-01-03" in mail.get_payload()
    assert history(rita, warehouse, sent.id)[-1] == {"event": "emailed", "recipients": 1}
    outbox.settle(OutboxMessage.objects.get(pk=message.pk))  # again: recorded once
    assert [e["event"] for e in history(rita, warehouse, sent.id)].count("emailed") == 1


@pytest.mark.single_redis  # reads the server's command counts
def test_the_emails_handed_over_by_one_call_leave_the_index_in_one_command(
    at_noon, replenishers, warehouse, send, supervisors, redis
):
    for n in range(3):
        send(f"Replenish A-01-0{n}")

    def zrems() -> int:
        return int(redis.info("commandstats").get("cmdstat_zrem", {}).get("calls", 0))

    before = zrems()
    assert followups.pass_warehouse(warehouse.pk, at_ms=NOON + 300 * S)["emailed"] == 3
    assert zrems() - before == 1  # not one per e-mail (the script removes none of an open alert)
    assert OutboxMessage.objects.filter(kind="email").count() == 3
    assert not redis.zcard(keys.reminders(warehouse.pk))


def test_off_shift_members_are_not_emailed_unless_it_is_critical(
    at_noon, replenishers, warehouse, send, smtp, supervisors
):
    Shift.objects.create(
        warehouse=warehouse, role=supervisors, name="Night", starts="22:00", ends="06:00"
    )
    send()
    send("Stock out A-01-04", severity="critical")

    assert followups.pass_all(at_ms=NOON + 300 * S)["emailed"] == 1
    [message] = OutboxMessage.objects.filter(kind="email")
    assert "Stock out A-01-04" in message.payload["subject"]


def test_an_email_server_that_refuses_is_tried_again(
    at_noon, replenishers, warehouse, send, settings, supervisors
):
    send()
    settings.EMAIL_BACKEND = "outbound.mail.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", embedded_redis.free_port()
    followups.pass_all(at_ms=NOON + 300 * S)
    [message] = OutboxMessage.objects.filter(kind="email")

    assert outbox.deliver(str(message.pk)) == "retry"  # nobody listens there
    assert OutboxMessage.objects.get(pk=message.pk).status == "pending"
