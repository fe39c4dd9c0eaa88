"""notifications.hooks: what features hear of (publish, escalation, lifecycle steps) and what
the core asks them (who is on shift, the report's shift rows), with its defaults."""

from __future__ import annotations

import logging

import pytest
from django.contrib.auth.models import Group

from notifications import hooks, lifecycle, reports
from push import dispatch as push_dispatch
from shifts import reports as shift_reports
from shifts import selectors as shift_selectors

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def heard(monkeypatch):
    """Every announcement, in order, as a listener that listened last hears them."""
    found: list[hooks.Announcement] = []
    listeners = {kind: list(found_) for kind, found_ in hooks._listeners.items()}
    monkeypatch.setattr(hooks, "_listeners", listeners)
    for kind in (hooks.Published, hooks.Escalated, hooks.Changed):
        hooks.listen(kind, found.append)
    return found


def test_the_features_listen_from_their_apps():
    assert push_dispatch.after_publish in hooks._listeners[hooks.Published]
    assert push_dispatch.after_escalation in hooks._listeners[hooks.Escalated]
    assert hooks.shifts is shift_selectors
    assert hooks.shift_report is shift_reports.shift_report


def test_listening_twice_is_hearing_once(heard):
    hooks.listen(hooks.Published, heard.append)
    assert hooks._listeners[hooks.Published].count(heard.append) == 1


def test_a_publish_is_announced_with_the_inboxes_it_reached(replenishers, send, heard):
    result = send()
    published = [a for a in heard if isinstance(a, hooks.Published)]
    assert [p.notification.id for p in published] == [result.id]
    assert list(published[0].inboxes) == list(result.subscribers)


def test_a_publish_that_reached_nobody_is_not_announced(warehouse, rep_notice, send, heard):
    send()  # nobody subscribes
    assert heard == []


def test_a_listener_that_fails_is_logged_and_the_next_one_still_runs(
    replenishers, send, heard, monkeypatch, caplog
):
    def broken(published: hooks.Published) -> None:
        raise RuntimeError("feature bug")

    listeners = hooks._listeners[hooks.Published]
    monkeypatch.setitem(hooks._listeners, hooks.Published, [broken, *listeners])
    with caplog.at_level(logging.ERROR, logger="notifications.hooks"):
        result = send()
    assert result.recipients == 1  # the publish stands: in the role's inbox
    assert [a.notification.id for a in heard if isinstance(a, hooks.Published)] == [result.id]
    assert "feature bug" in caplog.text


def test_claim_release_and_resolve_are_announced_with_who(warehouse, replenishers, send, heard):
    rita, _ = replenishers
    note = send()
    where = {"warehouse_id": warehouse.pk, "notification_id": note.id}
    lifecycle.claim(user=rita, **where)
    lifecycle.release(user=rita, **where)
    lifecycle.resolve(user=rita, **where)
    lifecycle.resolve_by_system(**where)  # resolved already: nothing changed, nothing told
    changed = [a for a in heard if isinstance(a, hooks.Changed)]
    assert [(c.step, c.by and c.by.username) for c in changed] == [
        ("claim", "rita"),
        ("release", "rita"),
        ("resolve", "rita"),
    ]
    assert {(c.warehouse_id, c.notification_id) for c in changed} == {(warehouse.pk, note.id)}


def test_a_resolve_by_the_system_is_announced_without_who(warehouse, replenishers, send, heard):
    note = send()
    assert lifecycle.resolve_by_system(warehouse_id=warehouse.pk, notification_id=note.id)
    [changed] = [a for a in heard if isinstance(a, hooks.Changed)]
    assert (changed.notification_id, changed.step, changed.by) == (note.id, "resolve", None)


def test_a_replayed_claim_is_not_announced_again(warehouse, replenishers, send, heard):
    rita, _ = replenishers
    note = send()
    for _ in range(2):
        lifecycle.act(
            lifecycle.Action.CLAIM,
            user=rita,
            warehouse_id=warehouse.pk,
            notification_id=note.id,
            idempotency_key="k-1",
        )
    assert [a.step for a in heard if isinstance(a, hooks.Changed)] == ["claim"]


def test_an_escalation_is_announced_with_the_roles_inbox(
    warehouse, rep_notice, replenishers, send, heard
):
    supervisors = Group.objects.create(name="Supervisors")  # no shifts: always on
    rep_notice.escalate_after_seconds = 120
    rep_notice.escalation_role = supervisors
    rep_notice.save()
    note = send()
    assert lifecycle.escalate_warehouse(warehouse.pk, at_ms=note.created_at_ms + 121_000) == 1
    [escalated] = [a for a in heard if isinstance(a, hooks.Escalated)]
    assert escalated.item.notification.id == note.id
    assert list(escalated.inboxes) == [f"r:{supervisors.pk}"]


def test_without_a_shifts_feature_the_report_has_no_shift_rows(monkeypatch):
    monkeypatch.setattr(hooks, "shift_report", hooks.no_shift_report)
    assert reports.alert_report(days=1).per_shift == []
