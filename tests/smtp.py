"""A real SMTP server (aiosmtpd) on 127.0.0.1, which the product's e-mail backend sends to."""

from __future__ import annotations

import email
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from aiosmtpd.controller import Controller

from devredis import embedded_redis

Handler = TypeVar("Handler")


class Mailbox:
    """What the server received: each message, and each one's envelope recipients."""

    def __init__(self) -> None:
        self.messages: list[email.message.Message] = []
        self.envelopes: list[list[str]] = []

    async def handle_DATA(self, server, session, envelope) -> str:
        self.envelopes.append(list(envelope.rcpt_tos))
        self.messages.append(email.message_from_bytes(envelope.content))
        return "250 Message accepted"


@contextmanager
def smtp_server(handler: Handler, settings: Any) -> Iterator[Handler]:
    """Serve SMTP with `handler` (aiosmtpd's handle_* methods) and point Django's e-mail at it
    through the product's backend (the tests' settings use locmem); yields the handler."""
    port = embedded_redis.free_port()
    controller = Controller(handler, hostname="127.0.0.1", port=port)
    controller.start()
    settings.EMAIL_BACKEND = "outbound.mail.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", port
    settings.DEFAULT_FROM_EMAIL = "wms@example.com"
    try:
        yield handler
    finally:
        controller.stop()
