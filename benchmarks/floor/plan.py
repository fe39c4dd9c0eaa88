"""What the simulation's processes share: who the handhelds are, where the servers listen,
and how bad the network is. Plain data, so it crosses into the client processes as it is."""

from __future__ import annotations

from dataclasses import dataclass, field

ALERT_TYPE = "FLOOR_ALERT"
ACTION_CODE = "task-created"
CONFIRM_FIELD = "bin"
CREWS = ("Early crew", "Late crew")


@dataclass(frozen=True)
class Network:
    """A handheld's Wi-Fi. Streams are dropped after an exponential lifetime (mean
    `drop_every` seconds) and come back after `offline` seconds; a stream open is refused by
    the network (a captive or buffering proxy) with probability `refuse`; an API request is
    lost on its way with `lose_request`, its answer with `lose_answer` (the server did the
    work), each noticed after `timeout` seconds."""

    drop_every: float = 60.0
    offline: tuple[float, float] = (0.5, 5.0)
    refuse: float = 0.05
    lose_request: float = 0.1
    lose_answer: float = 0.1
    timeout: tuple[float, float] = (1.0, 3.0)


@dataclass(frozen=True)
class Handheld:
    index: int
    user_id: int
    username: str
    token: str
    warehouse: int
    crew: int  # 0: early crew, on shift until the change; 1: late crew, from the change


@dataclass(frozen=True)
class Plan:
    api_base: str
    stream_base: str
    warehouses: tuple[int, ...]
    handhelds: tuple[Handheld, ...]
    publisher_token: str
    staff_token: str
    network: Network = field(default_factory=Network)
    seed: int = 1
    # Publishing: alerts per minute per warehouse, the share that is critical.
    rate_per_minute: float = 6.0
    critical_share: float = 0.25
    # Operators: seconds before a person reacts to a critical alert, then before the press
    # (a share of the jobs take long: the bin is at the far end), so some claims are still
    # held when the crews change.
    human_delay: tuple[float, float] = (2.0, 8.0)
    work_delay: tuple[float, float] = (2.0, 8.0)
    long_work_share: float = 0.15
    long_work: tuple[float, float] = (30.0, 120.0)
    # The page's fall-back (web/static/web/js/stream.js): polls every UI_POLL_INTERVAL_SECONDS,
    # tries the stream again after 15 s, doubling up to 5 minutes.
    poll_interval: float = 10.0
    stream_backoff: tuple[float, float] = (15.0, 300.0)
