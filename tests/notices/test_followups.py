"""Beat's pass over notices (SPEC 15): a reminder at each missing member's next shift start
(once per shift), the escalation once when due with acknowledgements missing (a notification
to the escalation role and an e-mail through the outbox to a real SMTP server), however many
beats race; a version whose publish failed goes out on the next pass."""

from __future__ import annotations

import datetime as dt

import pytest
from django.contrib.auth.models import Group
from django.utils import translation

from config import timestamps
from notices import followups, services
from notices.models import Notice, NoticeAck, NoticeReminder
from notifications.selectors import inbox_page
from outbox import services as outbox
from outbox.models import OutboxMessage
from shifts.models import Shift
from tests.notices.conftest import BEFORE_EARLY, S, ms
from tests.racing import crashed, race

pytestmark = pytest.mark.django_db(transaction=True)


def notices_of(user, warehouse) -> list[dict]:
    return [
        i.notification.data
        for i in inbox_page(user=user, warehouse_id=warehouse.pk, include_read=True).items
        if i.notification.message_type == "NOTICE"
    ]


@pytest.fixture
def early(warehouse, people, clock):
    clock.stop_at(ms(BEFORE_EARLY))
    return Shift.objects.create(
        warehouse=warehouse, role=people.floor, name="Early", starts=dt.time(6), ends=dt.time(14)
    )


def test_a_missing_member_is_reminded_at_the_next_shift_start_once(
    warehouse, people, post_notice, early, clock
):
    notice = post_notice()
    assert followups.pass_all()["reminded"] == 0  # the shift has not started yet
    services.notice_ack(user=people.rita, notice_id=notice.pk, version=1)

    clock.stop_at(ms(BEFORE_EARLY) + 6 * S)  # 06:00:01: Early started
    assert followups.pass_all()["reminded"] == 1  # ralf; rita has read it
    assert followups.pass_all()["reminded"] == 0  # once per shift
    clock.stop_at(ms(BEFORE_EARLY) + 3600 * S)
    assert followups.pass_all()["reminded"] == 0

    assert notices_of(people.ralf, warehouse) == [
        {"notice_id": notice.pk, "version": 1},
        {"notice_id": notice.pk, "version": 1, "reminder": True},
    ]
    assert notices_of(people.rita, warehouse) == [{"notice_id": notice.pk, "version": 1}]
    [reminder] = NoticeReminder.objects.all()
    assert reminder.user_id == people.ralf.pk
    assert reminder.shift_start == BEFORE_EARLY + dt.timedelta(seconds=5)
    assert reminder.sent_at is not None

    clock.stop_at(ms(BEFORE_EARLY + dt.timedelta(days=1)) + 6 * S)  # the next day's Early
    assert followups.pass_all()["reminded"] == 1
    NoticeAck.objects.create(
        notice=notice, version=1, user=people.ralf, acked_at=timestamps.now(), text_hash="x"
    )
    clock.stop_at(ms(BEFORE_EARLY + dt.timedelta(days=2)) + 6 * S)
    assert followups.pass_all()["reminded"] == 0  # everyone has read it


def test_racing_beats_remind_each_member_once(warehouse, people, post_notice, early, clock):
    post_notice()
    clock.stop_at(ms(BEFORE_EARLY) + 6 * S)
    done, failures = race(4, lambda: followups.remind(now=timestamps.now()))
    assert crashed(failures) == []
    # A racer that SQLite refused after its claim left its reminders unsent: a pass after
    # RETRY_AFTER sends them (under the same Idempotency-Key: never twice).
    clock.stop_at(ms(BEFORE_EARLY) + 6 * S + int(followups.RETRY_AFTER.total_seconds() + 1) * S)
    later = followups.remind(now=timestamps.now())
    assert sum(done) + later == 2  # rita and ralf, once each
    assert NoticeReminder.objects.filter(sent_at__isnull=True).count() == 0
    assert len(notices_of(people.ralf, warehouse)) == 2
    assert len(notices_of(people.rita, warehouse)) == 2


def test_escalation_once_under_racing_beats_with_an_email_naming_who_is_missing(
    warehouse,
    people,
    post_notice,
    clock,
    smtp,
):
    clock.stop_at(ms(BEFORE_EARLY))
    notice = post_notice(due_at=BEFORE_EARLY + dt.timedelta(hours=1))
    services.notice_ack(user=people.rita, notice_id=notice.pk, version=1)
    assert followups.escalate_due(now=timestamps.now()) == 0  # not due yet

    clock.stop_at(ms(BEFORE_EARLY + dt.timedelta(hours=1)))
    done, failures = race(4, lambda: followups.escalate_due(now=timestamps.now()))
    assert crashed(failures) == []
    later = followups.escalate_due(now=timestamps.now())
    assert sum(done) + later <= 1  # a racer SQLite refused after its claim counts nothing
    # ... and a pass after RETRY_AFTER sends what it left (never twice).
    clock.stop_at(ms(BEFORE_EARLY + dt.timedelta(hours=1) + followups.RETRY_AFTER) + S)
    assert followups.pass_all()["escalated"] == 0

    [told] = [
        i.notification
        for i in inbox_page(user=people.sam, warehouse_id=warehouse.pk).items
        if i.notification.data.get("escalation")
    ]
    assert told.data == {
        "notice_id": notice.pk,
        "version": 1,
        "escalation": True,
        "title": "Forklift lane B closed",
        "missing": ["ralf"],
        "missing_count": 1,
    }
    # Sentences (the page says them again in its reader's language from `data`).
    assert told.title == "Not read in time: Forklift lane B closed"
    assert told.body == "1 person has not read version 1 by its due time: ralf."
    assert notices_of(people.ralf, warehouse) == [{"notice_id": notice.pk, "version": 1}]

    [message] = OutboxMessage.objects.filter(kind="email")
    assert message.payload["to"] == ["sam@example.com"]
    assert outbox.deliver(str(message.pk)) == "succeeded"
    [mail] = smtp.messages
    assert smtp.envelopes == [["sam@example.com"]]
    assert "Forklift lane B closed" in mail["Subject"]
    assert "SH01" in mail["Subject"]
    assert "- ralf" in mail.get_payload()
    assert "rita" not in mail.get_payload()
    notice.refresh_from_db()
    assert (notice.escalated_missing, notice.escalation_sent) == (1, True)


def test_nothing_is_escalated_when_everyone_read_it(warehouse, people, post_notice, clock):
    clock.stop_at(ms(BEFORE_EARLY))
    notice = post_notice(due_at=BEFORE_EARLY)
    for user in (people.rita, people.ralf):
        services.notice_ack(user=user, notice_id=notice.pk, version=1)
    assert followups.escalate_due(now=timestamps.now()) == 0
    assert not OutboxMessage.objects.exists()
    notice.refresh_from_db()
    assert notice.escalated_missing == 0  # checked once, not at every pass


def test_a_new_version_may_escalate_again(warehouse, people, post_notice, clock):
    clock.stop_at(ms(BEFORE_EARLY))
    notice = post_notice(due_at=BEFORE_EARLY)
    assert followups.escalate_due(now=timestamps.now()) == 1
    services.notice_update(
        notice_id=notice.pk,
        changes={"title": "Lane B and C closed", "due_at": BEFORE_EARLY + dt.timedelta(hours=2)},
    )
    assert followups.escalate_due(now=timestamps.now()) == 0
    clock.stop_at(ms(BEFORE_EARLY) + 2 * 3600 * S)
    assert followups.escalate_due(now=timestamps.now()) == 1
    assert OutboxMessage.objects.filter(kind="email").count() == 2


def test_a_version_not_yet_published_goes_out_on_the_next_pass_once(warehouse, people):
    # As after Redis failed between the commit and the publish.
    notice = Notice.objects.create(warehouse=warehouse, title="Cold-chain check from Monday")
    notice.roles.set([Group.objects.get(name="Floor")])
    assert notices_of(people.rita, warehouse) == []

    assert followups.pass_all()["published"] == 1
    assert followups.pass_all()["published"] == 0
    assert notices_of(people.rita, warehouse) == [{"notice_id": notice.pk, "version": 1}]


def test_a_beat_that_read_it_due_before_another_claimed_it_escalates_nothing(
    warehouse, people, post_notice, clock, monkeypatch
):
    """The interleaving racing beats make, made on purpose: the second pass runs whole between
    the first one's read of the due notices and its claim."""
    clock.stop_at(ms(BEFORE_EARLY))
    post_notice(due_at=BEFORE_EARLY)
    real = followups.selectors.missing_members
    inner: list[int] = []

    def missing_then_a_racer(*, notice):
        found = real(notice=notice)
        if not inner:
            inner.append(-1)
            inner[0] = followups.escalate_due(now=timestamps.now())
        return found

    monkeypatch.setattr(followups.selectors, "missing_members", missing_then_a_racer)
    outer = followups.escalate_due(now=timestamps.now())
    assert (inner[0], outer) == (1, 0)
    assert OutboxMessage.objects.filter(kind="email").count() == 1
    told = [
        i
        for i in inbox_page(user=people.sam, warehouse_id=warehouse.pk).items
        if i.notification.data.get("escalation")
    ]
    assert len(told) == 1


def test_beat_runs_the_pass_at_least_every_10_seconds_once_per_tick(settings):
    from config.beat_schedule import TICK_HEADER
    from notices.tasks import notices_pass

    entry = settings.CELERY_BEAT_SCHEDULE["notices-pass"]
    assert entry["task"] == notices_pass.name == "notices.tasks.notices_pass"
    assert entry["schedule"] <= 10
    assert entry["options"]["headers"][TICK_HEADER] == entry["schedule"]  # config/beat.py


def test_the_escalation_is_said_in_sentences_in_english_and_chinese(
    warehouse, people, post_notice, make_user, clock, settings
):
    settings.NOTICE_ESCALATION_MAX_NAMES = 2
    for name in ("carl", "dora"):
        make_user(name, people.floor)
    clock.stop_at(ms(BEFORE_EARLY))
    notice = post_notice(due_at=BEFORE_EARLY)
    services.notice_ack(user=people.rita, notice_id=notice.pk, version=1)
    assert followups.escalate_due(now=timestamps.now()) == 1
    [told] = [
        i.notification
        for i in inbox_page(user=people.sam, warehouse_id=warehouse.pk).items
        if i.notification.data.get("escalation")
    ]
    assert told.data["missing"] == ["carl", "dora"]
    assert told.data["missing_count"] == 3
    assert told.body == "3 people have not read version 1 by its due time: carl, dora and 1 more."
    assert "missing" not in told.body.lower()
    assert "[" not in told.body

    from notices import wording  # the sentences the notification and the page say

    with translation.override("zh-hans"):
        title = wording.escalation_title(title=notice.title)
        body = wording.escalation_body(version=1, names=["carl", "dora"], count=3)
    assert title == "未按时阅读：Forklift lane B closed"  # noqa: RUF001 (Chinese punctuation)
    assert body == "3 人未在截止时间前阅读第 1 版：carl、dora 等另外 1 人。"  # noqa: RUF001


def test_editing_an_overdue_notice_gives_the_new_version_a_fresh_due_time(
    warehouse, people, post_notice, clock
):
    """Version 1 had an hour to be read and escalated when it passed; the edit half an hour
    later gives version 2 its own hour instead of escalating (and e-mailing) it at once."""
    clock.stop_at(ms(BEFORE_EARLY))
    notice = post_notice(due_at=BEFORE_EARLY + dt.timedelta(hours=1))
    clock.stop_at(ms(BEFORE_EARLY + dt.timedelta(hours=1)))
    assert followups.escalate_due(now=timestamps.now()) == 1
    edited_at = BEFORE_EARLY + dt.timedelta(hours=1, minutes=30)
    clock.stop_at(ms(edited_at))

    services.notice_update(notice_id=notice.pk, changes={"body": "Use lane D until Friday."})

    notice.refresh_from_db()
    assert notice.version == 2
    assert notice.due_at == edited_at + dt.timedelta(hours=1)
    assert notice.escalated_at is None
    assert followups.pass_all()["escalated"] == 0
    assert OutboxMessage.objects.filter(kind="email").count() == 1
    clock.stop_at(ms(edited_at + dt.timedelta(hours=1)))
    assert followups.escalate_due(now=timestamps.now()) == 1  # version 2, at its own time
    assert OutboxMessage.objects.filter(kind="email").count() == 2


def test_an_edit_from_code_follows_the_same_due_rule_and_a_given_due_time_stands(
    warehouse, people, post_notice, clock
):
    clock.stop_at(ms(BEFORE_EARLY))
    # Published with a due time already past: no time to read to carry over, so none.
    late = post_notice(due_at=BEFORE_EARLY - dt.timedelta(minutes=5))
    assert followups.escalate_due(now=timestamps.now()) == 1
    late = Notice.objects.get(pk=late.pk)
    late.title = "Lane B and lane C closed"
    late.save()
    late.refresh_from_db()
    assert (late.version, late.due_at) == (2, None)

    notice = post_notice(title="Cold-chain check", due_at=BEFORE_EARLY + dt.timedelta(hours=1))
    clock.stop_at(ms(BEFORE_EARLY + dt.timedelta(hours=2)))
    given = BEFORE_EARLY + dt.timedelta(hours=2, minutes=10)
    services.notice_update(notice_id=notice.pk, changes={"body": "From Monday.", "due_at": given})
    notice.refresh_from_db()
    assert (notice.version, notice.due_at) == (2, given)
    assert followups.pass_all()["escalated"] == 0


def test_a_reminder_claimed_for_a_version_since_replaced_is_not_sent_with_the_new_text(
    warehouse, people, post_notice, early, clock
):
    """A pass claimed reminders of version 1 and died before sending them; the notice was
    edited since. The retry must not send version 2's text as a reminder of version 1 (and
    version 2 went to everyone when it was published)."""
    notice = post_notice()
    start = BEFORE_EARLY + dt.timedelta(seconds=5)
    clock.stop_at(ms(start) + S)
    for user in (people.rita, people.ralf):
        NoticeReminder.objects.create(
            notice=notice,
            version=1,
            user=user,
            shift_start=start,
            token="died-after-its-claim",
            created_at=timestamps.now(),
        )
    services.notice_update(notice_id=notice.pk, changes={"body": "Use lane D until Friday."})
    clock.stop_at(ms(start) + S + int(followups.RETRY_AFTER.total_seconds() + 1) * S)

    followups.pass_all()

    for user in (people.rita, people.ralf):
        reminders = [
            i.notification
            for i in inbox_page(user=user, warehouse_id=warehouse.pk, include_read=True).items
            if i.notification.data.get("reminder")
        ]
        assert [(n.data["version"], n.body) for n in reminders] in (
            [],
            [(2, "Use lane D until Friday.")],
        )
    assert not NoticeReminder.objects.filter(version=1, sent_at__isnull=True).exists()


def test_a_reminder_carries_the_text_of_the_version_it_reminds_of(
    warehouse, people, post_notice, early, clock
):
    notice = post_notice()
    services.notice_update(notice_id=notice.pk, changes={"body": "Use lane D until Friday."})
    clock.stop_at(ms(BEFORE_EARLY) + 6 * S)
    assert followups.pass_all()["reminded"] == 2
    [reminder] = [
        i.notification
        for i in inbox_page(user=people.ralf, warehouse_id=warehouse.pk).items
        if i.notification.data.get("reminder")
    ]
    assert (reminder.data["version"], reminder.body) == (2, "Use lane D until Friday.")
