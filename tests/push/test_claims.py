"""Pushes that follow claims (SPEC 17): a claim that expired is pushed again; a claim or a
resolve withdraws the alert from other members' devices."""

from __future__ import annotations

import pytest

from config import timestamps
from notifications import claims, lifecycle

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_claim_that_expired_is_pushed_again_to_the_members(
    warehouse, crew, send, rep_notice, push_service, browser_at, subscribe, celery_eager
):
    rita, ralf, _ = crew
    rep_notice.claim_timeout_seconds = 60
    rep_notice.save()
    phone = browser_at("ralf-phone")
    subscribe(ralf, phone, warehouse)
    note = send()
    lifecycle.claim(user=rita, warehouse_id=warehouse.pk, notification_id=note.id)
    pushed = len(push_service.to("ralf-phone"))

    assert claims.expire_all(at_ms=timestamps.now_ms() + 61_000) == 1

    again = push_service.to("ralf-phone")[pushed:]
    assert [phone.decrypt(p.body)["id"] for p in again] == [note.id]
    assert phone.decrypt(again[0].body)["status"] == "open"


def test_a_claim_replaces_the_alert_on_other_members_devices_with_who_claimed_it(
    warehouse, crew, send, push_service, browser_at, subscribe, celery_eager
):
    rita, ralf, _ = crew
    rita_phone, ralf_phone = browser_at("rita-phone"), browser_at("ralf-phone")
    subscribe(rita, rita_phone, warehouse)
    subscribe(ralf, ralf_phone, warehouse)
    note = send()
    assert (len(push_service.to("rita-phone")), len(push_service.to("ralf-phone"))) == (1, 1)

    lifecycle.claim(user=rita, warehouse_id=warehouse.pk, notification_id=note.id)

    assert len(push_service.to("rita-phone")) == 1  # not to the one who claimed it
    first, withdrawal = push_service.to("ralf-phone")
    payload = ralf_phone.decrypt(withdrawal.body)
    assert (payload["id"], payload["status"], payload["claimed_by"]) == (note.id, "claimed", "rita")
    assert "close" not in payload
    # The same alert: its tag (the id) in the service worker, its Topic at the push service.
    assert withdrawal.headers["topic"] == first.headers["topic"]

    lifecycle.resolve(user=rita, warehouse_id=warehouse.pk, notification_id=note.id)

    resolved = ralf_phone.decrypt(push_service.to("ralf-phone")[-1].body)
    assert (resolved["id"], resolved["status"], resolved["close"]) == (note.id, "resolved", True)
    assert len(push_service.to("rita-phone")) == 1


def test_an_alert_that_was_never_pushed_is_not_withdrawn(
    warehouse, crew, send, push_service, browser_at, subscribe, celery_eager
):
    rita, ralf, _ = crew
    subscribe(ralf, browser_at("ralf-phone"), warehouse)
    note = send(severity="info")
    lifecycle.claim(user=rita, warehouse_id=warehouse.pk, notification_id=note.id)
    lifecycle.resolve(user=rita, warehouse_id=warehouse.pk, notification_id=note.id)
    assert push_service.received == []
