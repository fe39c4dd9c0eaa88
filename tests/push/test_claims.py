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
