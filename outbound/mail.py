"""The e-mail backend the server sends with: Django's SMTP backend, with one time limit for a
whole send when a deadline is set (outbound/deadline.py; the outbox sets one per attempt).

Django's EMAIL_TIMEOUT limits each socket operation, so a server that answers every command a
little slower than the last, or many recipients slowly, can make one send last for minutes,
past the outbox's lease, and another worker would then send the same e-mail again. Here each
operation waits at most the time left, and at the deadline the connection's socket is shut
down from a timer thread, which ends whatever the send was waiting for; the send then fails
with `TimeLimitPassed` (the outbox tries it again later). Without a deadline it is Django's.
"""

from __future__ import annotations

import contextlib
import smtplib
import socket
import threading
from collections.abc import Sequence
from typing import Any

from django.core.mail import EmailMessage
from django.core.mail.backends.smtp import EmailBackend as DjangoSMTPBackend

from outbound import deadline


class TimeLimitPassed(smtplib.SMTPServerDisconnected):
    """The send's time limit passed: the connection was cut (the server may have the message
    if the cut came after it took it: a later attempt sends it again, with the same
    Message-ID)."""


class EmailBackend(DjangoSMTPBackend):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._opening: list[smtplib.SMTP] = []  # connections being made (greeting, STARTTLS)

    @property
    def connection_class(self) -> type[smtplib.SMTP]:
        base = super().connection_class  # type: ignore[misc]
        backend = self

        class Tracked(base):  # type: ignore[valid-type,misc]
            """Known to the backend from its first socket, so the deadline can cut it."""

            def _get_socket(self, host: str, port: int, timeout: float) -> socket.socket:
                backend._opening.append(self)
                return super()._get_socket(host, port, timeout)

        return Tracked

    def send_messages(self, email_messages: Sequence[EmailMessage]) -> int:
        left = deadline.left()
        if left is None:
            return int(super().send_messages(email_messages))
        if left <= 0:
            raise TimeLimitPassed("the time limit of this send had passed before it began")
        # Each operation waits no longer than the whole send may take.
        timeout = self.timeout
        self.timeout = left if timeout is None else min(timeout, left)  # type: ignore[assignment]
        cut = threading.Event()
        timer = threading.Timer(left, self._cut, args=(cut,))
        timer.daemon = True
        timer.start()
        try:
            return int(super().send_messages(email_messages))
        except (smtplib.SMTPException, OSError) as exc:
            if cut.is_set():
                raise TimeLimitPassed(
                    f"the time limit of this send ({left:.1f} s) passed: connection cut"
                ) from exc
            raise
        finally:
            timer.cancel()
            self.timeout = timeout
            self._opening.clear()

    def _cut(self, cut: threading.Event) -> None:
        """At the deadline (timer thread): shut the socket down, which ends any wait on it."""
        cut.set()
        partial = getattr(self, "_partial_connection", None)  # Django's, being opened
        for connection in (self.connection, partial, *self._opening):
            sock = getattr(connection, "sock", None)
            if sock is None:
                continue
            with contextlib.suppress(OSError):  # already closed
                sock.shutdown(socket.SHUT_RDWR)
