"""A stream reader for the failover tests: it follows one stream as a browser would."""

from __future__ import annotations

import asyncio
import json

import httpx


class Reader:
    """Follows one stream like a browser's EventSource: reconnects with Last-Event-ID."""

    def __init__(self, base_url: str, headers: dict[str, str], warehouse_id: int) -> None:
        self.base_url, self.headers, self.warehouse_id = base_url, headers, warehouse_id
        self.ids: list[str] = []
        self.last_id: str | None = None
        self.statuses: list[int] = []
        self.stop = False

    async def run(self) -> None:
        async with httpx.AsyncClient(base_url=self.base_url, timeout=30) as client:
            while not self.stop:
                headers = dict(self.headers)
                if self.last_id:
                    headers["Last-Event-ID"] = self.last_id
                try:
                    async with client.stream(
                        "GET",
                        "/api/v1/stream/",
                        params={"warehouse": self.warehouse_id},
                        headers=headers,
                    ) as response:
                        self.statuses.append(response.status_code)
                        if response.status_code == 200:
                            await self._read(response)
                except httpx.HTTPError:
                    pass
                await asyncio.sleep(0.2)  # the stream's retry interval, as the browser waits

    async def _read(self, response: httpx.Response) -> None:
        event, event_id = "", None
        async for line in response.aiter_lines():
            if self.stop:
                return
            if line.startswith("event: "):
                event = line[7:]
                self.on_event(event)
            elif line.startswith("id: "):
                event_id = line[4:]
            elif line.startswith("data: ") and event == "notification":
                self.ids.append(json.loads(line[6:])["id"])
                self.on_notification()
            elif line == "":
                if event_id is not None:
                    self.last_id = event_id
                event, event_id = "", None

    def on_event(self, event: str) -> None:
        """Each event's name as its line comes (for a subclass to note)."""

    def on_notification(self) -> None:
        """After each notification is added to `ids` (for a subclass to note)."""
