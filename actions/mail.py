"""The outbox's handler of e-mails: Django's e-mail backend (SMTP, settings from the
environment), and the alert's `emailed` history event once sent."""

from __future__ import annotations

import smtplib

from django.conf import settings
from django.core.mail import EmailMessage, get_connection

from config import idempotency
from config.idempotency import Guard
from notifications import keys as notification_keys
from notifications import lifecycle
from notifications.domain import Event
from outbox.handlers import Delivery, Outcome
from outbox.models import OutboxMessage, Status

EMAIL = "email"

# Answers that will not change on a retry: the server refused the sender or every recipient.
_REFUSED = (smtplib.SMTPRecipientsRefused, smtplib.SMTPSenderRefused)


def send(message: OutboxMessage) -> Delivery:
    """Send the e-mail of `payload` ({"to", "subject", "body"}). Its Message-ID is the outbox
    message's id, so a copy sent twice (a worker killed after the server took it) is one
    message to mail clients that thread by it."""
    payload = message.payload
    email = EmailMessage(
        subject=payload["subject"],
        body=payload["body"],
        from_email=settings.DEFAULT_FROM_EMAIL,
        to=list(payload["to"]),
        headers={"Message-ID": f"<{message.pk}@wms-notify>"},
        connection=get_connection(fail_silently=False, timeout=settings.EMAIL_TIMEOUT),
    )
    try:
        sent = email.send(fail_silently=False)
    except _REFUSED as exc:
        return Delivery(Outcome.FAILED, error=f"{type(exc).__name__}: {exc}"[:500])
    except smtplib.SMTPResponseException as exc:
        outcome = Outcome.FAILED if 500 <= exc.smtp_code < 600 else Outcome.RETRY
        return Delivery(outcome, error=f"SMTP {exc.smtp_code}: {exc.smtp_error!r}"[:500])
    except (smtplib.SMTPException, OSError) as exc:
        return Delivery(Outcome.RETRY, error=f"{type(exc).__name__}: {exc}"[:500])
    return Delivery(Outcome.SUCCEEDED, result=f"sent to {len(payload['to'])} ({sent} message)")


def settle(message: OutboxMessage) -> None:
    """An e-mail about an alert went out: `emailed` in its history with the number of
    recipients, once (under a record of this message)."""
    payload = message.payload
    if message.status != Status.SUCCEEDED or "notification" not in payload:
        return
    record = f"outbox:{message.pk}:emailed"
    lifecycle.record_event(
        warehouse_id=int(payload["warehouse"]),
        notification_id=str(payload["notification"]),
        event=Event.EMAILED,
        by=None,
        extra={"recipients": len(payload["to"])},
        guard=Guard(
            record=notification_keys.idempotency(int(payload["warehouse"]), "python", record),
            fingerprint=idempotency.fingerprint(scope="python", operation="settle", request=record),
        ),
    )
