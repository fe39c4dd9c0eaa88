"""A send never outlives its lease (SPEC 10): a slow mail server, whose every answer comes
within EMAIL_TIMEOUT (a limit per socket operation), is cut off before the lease runs out, so
no other worker sends the same e-mail meanwhile; the next attempt sends it once."""

from __future__ import annotations

import asyncio
import email
import time
from collections.abc import Iterator
from typing import cast

import pytest
from django.db.models.functions import Now

from actions.mail import EMAIL
from outbox import services as outbox
from outbox.models import OutboxMessage
from tests.outbox.conftest import in_thread
from tests.smtp import smtp_server
from tests.waiting import eventually


class SlowMailbox:
    """An SMTP server that takes `delay` seconds to answer each recipient and the message."""

    def __init__(self) -> None:
        self.delay = 0.0
        self.messages: list[email.message.Message] = []

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options) -> str:
        await asyncio.sleep(self.delay)
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope) -> str:
        await asyncio.sleep(self.delay)
        self.messages.append(email.message_from_bytes(envelope.content))
        return "250 Message accepted"


@pytest.fixture
def slow_smtp(settings) -> Iterator[SlowMailbox]:
    """A real SMTP server (aiosmtpd) on 127.0.0.1, sent to with the product's e-mail backend."""
    with smtp_server(SlowMailbox(), settings) as mailbox:
        yield mailbox


def test_a_slow_mail_server_cannot_make_a_send_outlive_its_lease(
    transactional_db, slow_smtp, settings
):
    settings.OUTBOX_LEASE_SECONDS = 3.0
    settings.EMAIL_TIMEOUT = 2.0  # per socket operation: no single answer takes that long
    slow_smtp.delay = 1.0  # but three recipients and the message take four seconds
    to = ["sam@example.com", "sue@example.com", "sid@example.com"]
    message = outbox.enqueue(
        kind=EMAIL,
        payload={"to": to, "subject": "Stock-out A-01-03", "body": "Nobody claimed it."},
        queue_on_commit=False,
    )

    def first_worker() -> tuple[str, float]:
        started = time.monotonic()
        return outbox.deliver(str(message.pk)), time.monotonic() - started

    worker, results = in_thread(first_worker)
    assert eventually(
        lambda: OutboxMessage.objects.filter(pk=message.pk, status="sending").exists()
    )
    others: list[str] = []
    while worker.is_alive():  # another worker tries it, as beat's passes would make it
        others.append(outbox.deliver(str(message.pk)))
        worker.join(0.2)

    [(outcome, seconds)] = cast(list[tuple[str, float]], results)
    assert outcome == "retry"
    assert seconds < settings.OUTBOX_LEASE_SECONDS
    assert set(others) == {"not due"}
    found = OutboxMessage.objects.get(pk=message.pk)
    assert (found.status, found.attempts) == ("pending", 1)
    assert "time limit" in found.last_error
    assert slow_smtp.messages == []

    # Its next attempt, once due, with the server quick again: sent once.
    slow_smtp.delay = 0.0
    OutboxMessage.objects.filter(pk=message.pk).update(next_attempt_at=Now())
    assert outbox.deliver(str(message.pk)) == "succeeded"
    [sent] = slow_smtp.messages
    assert sent["Message-ID"] == f"<{message.pk}@wms-notify>"


def test_a_quick_mail_server_is_not_cut_off(transactional_db, slow_smtp, settings):
    settings.OUTBOX_LEASE_SECONDS = 3.0
    slow_smtp.delay = 0.3
    message = outbox.enqueue(
        kind=EMAIL,
        payload={"to": ["sam@example.com"], "subject": "Stock-out", "body": "Unclaimed."},
        queue_on_commit=False,
    )
    assert outbox.deliver(str(message.pk)) == "succeeded"
    assert len(slow_smtp.messages) == 1
