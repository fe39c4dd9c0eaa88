"""The WMS end of the alert action: an HTTPS server on 127.0.0.1 that checks each call's
signature and does the work once per run, as a WMS that keeps the Idempotency-Key does.

It counts what the simulation reports: the calls per Idempotency-Key (the run's id: more than
one is a retry, which the key absorbs) and the runs per alert (more than one is an action done
twice). A share of calls is answered 503 at random, as a busy WMS would, so the outbox's
retries are part of the run. Its certificate comes from a CA made for the run (the demo's
maker, demo/tls.py), which the servers trust through REQUESTS_CA_BUNDLE.
"""

from __future__ import annotations

import hashlib
import hmac
import http.server
import json
import random
import ssl
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from demo import tls

PATH = "/wms/replenishment-task"


@dataclass
class Call:
    at: float
    key: str
    notification: str
    action: str
    status: int


@dataclass
class Ledger:
    """What the receiver saw, under its lock."""

    calls: list[Call] = field(default_factory=list)
    done: dict[str, int] = field(default_factory=dict)  # run id -> the task its work made
    runs_of: dict[tuple[str, str], set[str]] = field(default_factory=lambda: defaultdict(set))
    bad_signatures: int = 0

    def figures(self) -> dict[str, Any]:
        per_key: dict[str, int] = defaultdict(int)
        for call in self.calls:
            per_key[call.key] += 1
        twice = {f"{n}/{a}": sorted(runs) for (n, a), runs in self.runs_of.items() if len(runs) > 1}
        return {
            "calls": len(self.calls),
            "answered_503": sum(1 for c in self.calls if c.status == 503),
            "runs_done": len(self.done),
            "calls_repeated": sum(n - 1 for n in per_key.values()),
            "runs_called_more_than_once": sum(1 for n in per_key.values() if n > 1),
            "actions_done_twice": len(twice),
            "done_twice": twice,
            "bad_signatures": self.bad_signatures,
        }


class Receiver:
    def __init__(self, folder: Path, *, busy_share: float, seed: int) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.ca, cert, key = tls.certificates(folder, days=1)
        self.ledger = Ledger()
        self.secret = ""
        self._lock = threading.Lock()
        self._random = random.Random(seed)
        self.busy_share = busy_share
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                status, answer = receiver.handle(self.path, dict(self.headers.items()), body)
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                if status == 503:
                    self.send_header("Retry-After", "1")
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        self.host = f"127.0.0.1:{self.server.server_address[1]}"
        self.url = f"https://{self.host}{PATH}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def handle(self, path: str, headers: dict[str, str], body: bytes) -> tuple[int, dict]:
        lower = {k.lower(): v for k, v in headers.items()}
        expected = "sha256=" + hmac.new(self.secret.encode(), body, hashlib.sha256).hexdigest()
        if path != PATH or not hmac.compare_digest(lower.get("x-wms-signature", ""), expected):
            with self._lock:
                self.ledger.bad_signatures += 1
            return 401, {"error": "bad signature"}
        try:
            call = json.loads(body)
            key = lower.get("idempotency-key", "")
            notification = str(call["notification"]["id"])
            action = str(call["action"])
        except (ValueError, KeyError, TypeError):
            return 400, {"error": "not an alert action call"}
        with self._lock:
            busy = self._random.random() < self.busy_share
            status = 503 if busy else 200
            self.ledger.calls.append(Call(time.time(), key, notification, action, status))
            if busy:
                return status, {"error": "busy, try again"}
            # The work, once per run: a retry with the same key finds it done.
            task = self.ledger.done.setdefault(key, len(self.ledger.done) + 1)
            self.ledger.runs_of[(notification, action)].add(key)
        return 200, {"task": f"RT-{task}"}

    def figures(self) -> dict[str, Any]:
        with self._lock:
            return self.ledger.figures()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
