"""The handhelds: one asyncio process holding every simulated device of the floor.

Each handheld follows its warehouse as the page does (web/static/web/js/stream.js): an event
stream (httpx with httpx-sse) that resumes with `Last-Event-ID`; when the stream is refused
(an HTTP error, no `ready` within 5 s, or its network refuses it) it polls the REST API every
`poll_interval` and tries the stream again after 15 s, doubling up to 5 minutes; on `event:
reset` it reloads the warehouse from scratch, again until a reload goes through. Its network
drops the stream at random and is offline for a few seconds each time. (The page also polls
on every `ready` and now and then while live; the handhelds do not, so the stream and its
replay alone must deliver everything.)

Its user is an operator of one crew: a critical alert that is open when they look (a human
delay after they saw it), while their crew is on shift, is claimed, and later (sometimes
much later) the alert's action is pressed, scanning the bin; one who went off shift
meanwhile leaves the claim to the handover. Both go over the lossy network with an
`Idempotency-Key` and are retried with the same key until they have an answer.

What each handheld saw (when and by which path it first saw each alert) and what the operators
did go back to the simulation at the end; a status line goes every few seconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import random
import time
import uuid
from collections import Counter, deque
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import httpx
from httpx_sse import SSEError, aconnect_sse

from benchmarks.floor.plan import ACTION_CODE, ALERT_TYPE, CONFIRM_FIELD, Handheld, Plan

OPEN_TIMEOUT = 5.0  # the page's: no `ready` by then, a proxy holds the stream back
SERVER_RETRY = 3.0  # the stream's `retry:`: an ended stream is opened again after it
STATUS_EVERY = 5.0
CALL_BUDGET = 120.0  # seconds an operator keeps retrying one request
TRACE = 400  # what a handheld did last (opens, readies, polls), for explaining a loss


class Path(StrEnum):
    STREAM = "stream"  # a live event on an open stream
    REPLAY = "replay"  # replayed by a stream opened with Last-Event-ID, before its `ready`
    POLL = "poll"  # a poll of the REST API, while the stream is refused
    OWN = "own"  # the operator's own claim answered it first


class Outcome(StrEnum):
    ENDED = "ended"  # the server ended it (or the connection broke once live)
    DROPPED = "dropped"  # the network dropped it
    REFUSED = "refused"  # not open: an HTTP error, no `ready` in time, the network


class Phase(StrEnum):
    WARMUP = "warmup"
    SHIFT = "shift"
    DRAIN = "drain"  # publishing is over; the network is good again, every device catches up
    STOP = "stop"


@dataclass
class Floor:
    """What all handhelds share: the phase, the shift change, the HTTP clients."""

    plan: Plan
    api: httpx.AsyncClient
    streams: httpx.AsyncClient
    phase: Phase = Phase.WARMUP
    change_at: float | None = None
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    stopped: asyncio.Event = field(default_factory=asyncio.Event)

    def set_phase(self, phase: Phase) -> None:
        self.phase = phase
        self.changed.set()
        self.changed = asyncio.Event()
        if phase == Phase.STOP:
            self.stopped.set()

    @property
    def calm(self) -> bool:
        """The network is good (draining) or the run is over."""
        return self.phase in (Phase.DRAIN, Phase.STOP)

    async def nap(self, seconds: float) -> None:
        """Sleep, waking early when the phase changes."""
        if seconds <= 0 or self.phase == Phase.STOP:
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.changed.wait(), seconds)

    async def wait(self, seconds: float) -> None:
        """Sleep, waking early only when the run stops (a person's delays)."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.stopped.wait(), max(0.0, seconds))


@dataclass
class Device:
    spec: Handheld
    floor: Floor
    rng: random.Random
    cursor: int | None = None
    joined_at: float | None = None
    mode: str = "starting"
    seen: dict[str, tuple[float, str]] = field(default_factory=dict)
    status_of: dict[str, tuple[int, str]] = field(default_factory=dict)  # id -> (cursor, status)
    pursued: set[str] = field(default_factory=set)
    reloading: bool = False
    trace: deque[tuple[float, str, str]] = field(default_factory=lambda: deque(maxlen=TRACE))
    counts: Counter[str] = field(default_factory=Counter)
    acts: list[dict[str, Any]] = field(default_factory=list)
    tasks: set[asyncio.Task[None]] = field(default_factory=set)
    _deadline: asyncio.Timeout | None = None

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Token {self.spec.token}"}

    @property
    def on_shift(self) -> bool:
        change = self.floor.change_at
        if change is None:
            return True  # no shifts in this run: a role without shifts is always on
        return (time.time() < change) == (self.spec.crew == 0)

    # --- following the warehouse -------------------------------------------------------

    async def run(self) -> None:
        network = self.floor.plan.network
        failures = 0
        while self.floor.phase != Phase.STOP:
            outcome = await self.stream_once()
            self.counts[f"stream_{outcome}"] += 1
            self.log(str(outcome))
            if self.floor.phase == Phase.STOP:
                break
            if outcome == Outcome.REFUSED:
                failures += 1
                low, high = self.floor.plan.stream_backoff
                await self.fall_back(min(high, low * 2 ** (failures - 1)))
                continue
            failures = 0
            if outcome == Outcome.DROPPED:
                self.mode = "offline"
                await self.floor.nap(0.2 if self.floor.calm else self.rng.uniform(*network.offline))
            else:
                self.mode = "reconnecting"
                await self.floor.nap(0.5 if self.floor.calm else SERVER_RETRY)

    async def stream_once(self) -> Outcome:
        network = self.floor.plan.network
        if not self.floor.calm and self.rng.random() < network.refuse:
            self.counts["refused_by_network"] += 1
            self.log("refused by the network")
            return Outcome.REFUSED
        loop = asyncio.get_running_loop()
        lifetime = math.inf if self.floor.calm else self.rng.expovariate(1 / network.drop_every)
        drop_at = loop.time() + lifetime
        headers = dict(self.auth)
        if self.cursor is not None:
            headers["Last-Event-ID"] = str(self.cursor)
        live = False
        self.mode = "opening"
        self.log("open", f"Last-Event-ID {headers.get('Last-Event-ID')}")
        try:
            async with asyncio.timeout(min(drop_at, loop.time() + OPEN_TIMEOUT)) as deadline:
                self._deadline = deadline
                async with aconnect_sse(
                    self.floor.streams,
                    "GET",
                    "/api/v1/stream/",
                    params={"warehouse": self.spec.warehouse},
                    headers=headers,
                ) as source:
                    if source.response.status_code != 200:
                        self.counts[f"refused_{source.response.status_code}"] += 1
                        self.log("status", str(source.response.status_code))
                        return Outcome.REFUSED
                    async for event in source.aiter_sse():
                        at = time.time()
                        if event.event in ("notification", "reminder"):
                            self.note(event.json(), at, Path.STREAM if live else Path.REPLAY)
                        elif event.event == "ready":
                            live = True
                            self.mode = "live"
                            self.joined_at = self.joined_at or at
                            deadline.reschedule(None if self.floor.calm else drop_at)
                            self.log("ready", event.id)
                        elif event.event == "reset":
                            # The cursor cannot be replayed from: reload from scratch, as
                            # the page does, until a reload has gone through.
                            self.counts["resets"] += 1
                            self.log("reset")
                            self.cursor = None
                            if not self.reloading:
                                self.reloading = True
                                self.spawn(self.reload())
                        if event.id and event.event in ("notification", "ready"):
                            self.cursor = int(event.id)
            return Outcome.ENDED
        except TimeoutError:
            if loop.time() >= drop_at:
                return Outcome.DROPPED
            self.counts["no_ready_in_time"] += 1
            return Outcome.REFUSED
        except (httpx.HTTPError, SSEError):
            if live:
                return Outcome.ENDED
            self.counts["refused_error"] += 1
            return Outcome.REFUSED
        finally:
            self._deadline = None

    def calm_down(self) -> None:
        """The drain began: an open stream is no longer dropped."""
        if self._deadline is not None and self.mode == "live":
            self._deadline.reschedule(None)

    async def fall_back(self, seconds: float) -> None:
        """Poll now and every poll interval, for `seconds` (or until the drain begins)."""
        self.mode = "polling"
        loop = asyncio.get_running_loop()
        until = loop.time() + seconds
        entered_calm = self.floor.calm
        while self.floor.phase != Phase.STOP and loop.time() < until:
            if self.floor.calm and not entered_calm:
                return  # the network came back: try the stream at once
            await self.poll()
            await self.floor.nap(min(self.floor.plan.poll_interval, until - loop.time()))

    async def reload(self) -> None:
        """A poll from scratch, again every poll interval until one has gone through."""
        try:
            while self.floor.phase != Phase.STOP:
                if await self.poll(reload=True):
                    return
                await self.floor.nap(self.floor.plan.poll_interval)
        finally:
            self.reloading = False

    async def poll(self, *, reload: bool = False) -> bool:
        """GET /api/v1/notifications/ after the cursor (or from scratch on `reload`), page
        after page until `has_more` is false; whether it went through."""
        network = self.floor.plan.network
        params: dict[str, Any] = {
            "warehouse": self.spec.warehouse,
            "include_read": "true",
            "limit": 200,
        }
        cursor = None if reload else self.cursor
        fate = 1.0 if self.floor.calm else self.rng.random()
        what = "reload" if reload else "poll"
        if fate < network.lose_request:
            self.counts["polls_lost"] += 1
            self.log(what, "request lost")
            return False
        seen = 0
        for _ in range(100):
            if cursor is not None:
                params["since"] = cursor
            try:
                answer = await self.floor.api.get(
                    "/api/v1/notifications/", params=params, headers=self.auth
                )
            except httpx.HTTPError as exc:
                self.counts["polls_failed"] += 1
                self.log(what, type(exc).__name__)
                return False
            if fate < network.lose_request + network.lose_answer:
                self.counts["polls_lost"] += 1
                self.log(what, "answer lost")
                return False
            if answer.status_code != 200:
                self.counts[f"polls_{answer.status_code}"] += 1
                self.log(what, str(answer.status_code))
                return False
            page = answer.json()
            at = time.time()
            for item in page["results"]:
                self.note(item, at, Path.POLL)
            seen += len(page["results"])
            cursor = int(page["next_since"])
            if not reload:
                self.cursor = cursor
            if not page["has_more"]:
                break
        self.counts["polls"] += 1
        self.log(what, f"since {params.get('since')}: {seen} items, next_since {cursor}")
        self.joined_at = self.joined_at or time.time()
        return True

    # --- what the handheld shows, and the operator ---------------------------------------

    def note(self, item: dict[str, Any], at: float, path: Path) -> None:
        if item.get("message_type") != ALERT_TYPE:
            self.counts[f"seen_{item.get('message_type')}"] += 1
            return
        alert = str(item["id"])
        self.seen.setdefault(alert, (at, path))
        cursor, status = int(item["cursor"]), str(item["status"])
        known = self.status_of.get(alert)
        if known is None or cursor >= known[0]:
            self.status_of[alert] = (cursor, status)
        if (
            item.get("severity") == "critical"
            and status == "open"
            and alert not in self.pursued
            and self.floor.phase in (Phase.SHIFT, Phase.DRAIN)
            and self.on_shift
        ):
            self.pursued.add(alert)
            self.spawn(self.pursue(alert, str((item.get("data") or {}).get(CONFIRM_FIELD, ""))))

    async def pursue(self, alert: str, scan: str) -> None:
        plan = self.floor.plan
        await self.floor.wait(self.rng.uniform(*plan.human_delay))
        if self.floor.phase == Phase.STOP or not self.on_shift:
            return
        if self.status_of[alert][1] != "open":
            self.counts["saw_it_taken"] += 1
            return
        base = f"/api/v1/notifications/{alert}"
        claim = await self.call(f"{base}/claim/", {"warehouse": self.spec.warehouse}, "claim")
        claim["alert"] = alert
        self.acts.append(claim)
        if claim["status"] != 200:
            return
        long = self.rng.random() < plan.long_work_share
        await self.floor.wait(self.rng.uniform(*(plan.long_work if long else plan.work_delay)))
        if self.floor.phase == Phase.STOP:
            return
        if not self.on_shift:
            self.counts["went_off_shift_holding_a_claim"] += 1
            return  # the handover gives the claim back; the next crew takes it
        press = await self.call(
            f"{base}/actions/{ACTION_CODE}/",
            {"warehouse": self.spec.warehouse, "scan": scan},
            "press",
        )
        press["alert"] = alert
        self.acts.append(press)

    async def call(self, path: str, body: dict[str, Any], kind: str) -> dict[str, Any]:
        """POST over the lossy network, retried with one Idempotency-Key until answered."""
        network = self.floor.plan.network
        key = uuid.uuid4().hex
        record: dict[str, Any] = {"kind": kind, "handheld": self.spec.index, "key": key}
        started = time.time()
        attempts = 0
        statuses: Counter[str] = Counter()
        while self.floor.phase != Phase.STOP and time.time() < started + CALL_BUDGET:
            attempts += 1
            fate = 1.0 if self.floor.calm else self.rng.random()
            if fate < network.lose_request:
                statuses["request_lost"] += 1
                await self.floor.wait(self.rng.uniform(*network.timeout))
                continue
            try:
                answer = await self.floor.api.post(
                    path, json=body, headers={**self.auth, "Idempotency-Key": key}
                )
            except httpx.HTTPError as exc:
                statuses[type(exc).__name__] += 1
                await self.floor.wait(1.0)
                continue
            if fate < network.lose_request + network.lose_answer:
                statuses["answer_lost"] += 1
                await self.floor.wait(self.rng.uniform(*network.timeout))
                continue
            statuses[str(answer.status_code)] += 1
            if answer.status_code in (429, 502, 503, 504):
                await self.floor.wait(_retry_after(answer))
                continue
            record.update(
                status=answer.status_code,
                replayed=answer.headers.get("Idempotent-Replayed") == "true",
                at=time.time(),
            )
            self._read(answer, record)
            break
        else:
            record.update(status=None, replayed=False, at=time.time())
        record.update(attempts=attempts, statuses=dict(statuses), started=started)
        return record

    def _read(self, answer: httpx.Response, record: dict[str, Any]) -> None:
        try:
            body = answer.json()
        except ValueError:
            return
        if record["kind"] == "claim" and answer.status_code == 200:
            record["claimed_at"] = body.get("claimed_at")
            record["claimed_by"] = (body.get("claimed_by") or {}).get("id")
            self.note(body, time.time(), Path.OWN)
        elif record["kind"] == "press" and isinstance(body.get("run"), dict):
            record["run"] = body["run"].get("id")
            record["run_status"] = body["run"].get("status")
        elif answer.status_code == 409:
            record["claimed_by"] = (body.get("claimed_by") or {}).get("id")

    def log(self, what: str, detail: str | None = "") -> None:
        self.trace.append((time.time(), what, detail or ""))

    def spawn(self, work: Any) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    def report(self) -> dict[str, Any]:
        return {
            "index": self.spec.index,
            "warehouse": self.spec.warehouse,
            "crew": self.spec.crew,
            "joined_at": self.joined_at,
            "seen": self.seen,
            "counts": dict(self.counts),
            "acts": self.acts,
            "trace": list(self.trace),
        }


def _retry_after(answer: httpx.Response) -> float:
    try:
        return min(5.0, max(0.2, float(answer.headers.get("Retry-After", "1"))))
    except ValueError:
        return 1.0


async def _follow_control(floor: Floor, devices: list[Device], control: Any) -> None:
    """Messages from the simulation: ("shift", change_at), ("drain",), ("stop",)."""
    loop = asyncio.get_running_loop()
    while floor.phase != Phase.STOP:
        message = await loop.run_in_executor(None, control.get)
        if message[0] == "shift":
            floor.change_at = message[1]
            floor.set_phase(Phase.SHIFT)
        elif message[0] == "drain":
            floor.set_phase(Phase.DRAIN)
            for device in devices:
                device.calm_down()
        elif message[0] == "stop":
            floor.set_phase(Phase.STOP)


async def _report_status(floor: Floor, devices: list[Device], out: Any, lags: list[float]) -> None:
    loop = asyncio.get_running_loop()
    last = loop.time()
    next_status = last + STATUS_EVERY
    while floor.phase != Phase.STOP:
        await asyncio.sleep(0.25)
        now = loop.time()
        lags.append(max(0.0, now - last - 0.25))
        last = now
        if now >= next_status:
            next_status = now + STATUS_EVERY
            modes = Counter(d.mode for d in devices)
            out.put(
                (
                    "handhelds",
                    {
                        "modes": dict(modes),
                        "joined": sum(1 for d in devices if d.joined_at is not None),
                        "sightings": sum(len(d.seen) for d in devices),
                        "claims": sum(1 for d in devices for a in d.acts if a["kind"] == "claim"),
                        "claimed": sum(
                            1
                            for d in devices
                            for a in d.acts
                            if a["kind"] == "claim" and a["status"] == 200
                        ),
                        "presses": sum(1 for d in devices for a in d.acts if a["kind"] == "press"),
                        "lag_ms": round(max(lags[-20:], default=0.0) * 1000),
                    },
                )
            )


async def _main(plan: Plan, control: Any, out: Any) -> None:
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=0)
    timeout = httpx.Timeout(15.0, read=45.0)  # a stream hears a heartbeat every 15 s
    async with (
        httpx.AsyncClient(base_url=plan.api_base, timeout=15.0) as api,
        httpx.AsyncClient(base_url=plan.stream_base, timeout=timeout, limits=limits) as streams,
    ):
        floor = Floor(plan=plan, api=api, streams=streams)
        devices = [
            Device(spec=spec, floor=floor, rng=random.Random(plan.seed * 100_003 + spec.index))
            for spec in plan.handhelds
        ]
        lags: list[float] = []
        control_task = asyncio.create_task(_follow_control(floor, devices, control))
        status_task = asyncio.create_task(_report_status(floor, devices, out, lags))
        runs = []
        for device in devices:  # not all at once: as devices are switched on over a second
            runs.append(asyncio.create_task(device.run()))
            await asyncio.sleep(1.0 / max(1, len(devices)))
        await control_task
        await asyncio.sleep(0)
        pending = [*runs, status_task, *(t for d in devices for t in d.tasks)]
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        ordered = sorted(lags)
        out.put(
            (
                "done",
                {
                    "devices": [d.report() for d in devices],
                    "loop_lag_ms": {
                        "p99": round(ordered[int(len(ordered) * 0.99)] * 1000) if ordered else 0,
                        "max": round(ordered[-1] * 1000) if ordered else 0,
                    },
                },
            )
        )


def run(plan: Plan, control: Any, out: Any) -> None:
    """The process's entry point (multiprocessing, spawned)."""
    asyncio.run(_main(plan, control, out))
