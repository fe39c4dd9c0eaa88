"""A claim let go by the system (SPEC 17) tells its holder's open streams, as `event:
claim_expired` with N; everyone else gets the change as usual."""

from __future__ import annotations

import json

import pytest

from config import timestamps
from notifications import claims, lifecycle
from notifications.services import publish

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_holder_hears_that_their_claim_expired(open_stream, subscribed, warehouse, rep_notice):
    rep_notice.claim_timeout_seconds = 60
    rep_notice.save()
    rita = subscribed("rita", warehouse, rep_notice)
    ralf = subscribed("ralf", warehouse, rep_notice)
    note = publish(message_type="REP_NOTICE", warehouse=warehouse, title="Replenish A-01-03")
    lifecycle.claim(user=rita, warehouse_id=warehouse.pk, notification_id=note.id)
    rita_stream = open_stream(rita, warehouse)
    ralf_stream = open_stream(ralf, warehouse)

    assert claims.expire_all(at_ms=timestamps.now_ms() + 61_000) == 1
    # After it, a change both see: ralf's stream must have had no claim_expired before it.
    later = publish(message_type="REP_NOTICE", warehouse=warehouse, title="Replenish B-02-01")

    changed = rita_stream.until("notification")
    assert (json.loads(changed.data)["id"], json.loads(changed.data)["status"]) == (
        note.id,
        "open",
    )
    expired = rita_stream.next()
    assert expired is not None
    assert expired.event == "claim_expired"
    assert expired.id is None
    data = json.loads(expired.data)
    assert (data["id"], data["status"], data["claimed_by"]) == (note.id, "open", None)
    seen = []
    while True:
        event = ralf_stream.next()
        assert event is not None
        seen.append((event.event, json.loads(event.data)["id"]))
        if json.loads(event.data)["id"] == later.id:
            break
    assert seen == [("notification", note.id), ("notification", later.id)]
