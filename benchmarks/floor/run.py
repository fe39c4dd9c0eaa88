"""`python -m benchmarks.floor`: a whole shift on the floor, against the production shape on
this machine (SPEC 16).

It starts its own servers on loopback (benchmarks/floor/shape.py: Redis with AOF, gunicorn,
uvicorn, a Celery worker consuming every queue, beat, nginx when installed), a throw-away
SQLite database (or `--database-url`), and an HTTPS receiver for the alert action's webhook;
seeds warehouses, two crews, their handhelds' users and the action; then runs the handhelds
(benchmarks/floor/handhelds.py) and the WMS that publishes (benchmarks/floor/publisher.py),
each in a process of its own, for `--minutes`, with the shift change midway; with `--faults`,
Redis is killed with SIGKILL a third of the way in and restarted from its append-only file,
and the Celery worker two thirds of the way in. After the shift, a drain lets every handheld
catch up on a good network; then it prints (and with `--json` writes) the figures
(benchmarks/floor/figures.py). Bounded in time: every phase has a deadline.

    python -m benchmarks.floor [--handhelds 200] [--minutes 2] [--faults] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import platform
import queue
import shutil
import sys
import tempfile
import time
import urllib.request
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks.floor import figures, handhelds, publisher, seed, shape
from benchmarks.floor.plan import Network, Plan
from benchmarks.floor.receiver import Receiver
from devredis.embedded_redis import free_port

PROGRESS_EVERY = 10.0
JOIN_TIMEOUT = 120.0
REPORT_TIMEOUT = 120.0
# A fault's window runs from the kill until this long after the server is back: the streams
# and polls that it broke have reconnected by then.
FAULT_SETTLE = 20.0
OBJECTIVE_SECONDS = 2.0  # DELIVERY_OBJECTIVE_SECONDS' default
CLAIM_SHARE_GOAL = 0.999


@dataclass
class Fault:
    kind: str  # "redis" or "worker"
    due: float
    killed_at: float | None = None
    back_at: float | None = None
    note: dict[str, Any] = field(default_factory=dict)


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.floor", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--handhelds", type=int, default=200, help="devices (default 200)")
    parser.add_argument("--minutes", type=float, default=2.0, help="the shift (default 2)")
    parser.add_argument(
        "--warehouses", type=int, help="default: one per 50 handhelds, at least 2, at most 8"
    )
    parser.add_argument("--faults", action="store_true", help="kill Redis and the worker")
    parser.add_argument("--json", metavar="FILE", help="write the figures as JSON")
    parser.add_argument(
        "--rate", type=float, default=6.0, help="alerts per minute per warehouse (default 6)"
    )
    parser.add_argument(
        "--critical", type=float, default=0.25, help="share of critical alerts (0.25)"
    )
    parser.add_argument("--drain", type=float, default=20.0, help="seconds after the shift")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--database-url", help="an empty database (default: a new SQLite file)")
    parser.add_argument("--web-workers", type=int, default=3, help="WEB_CONCURRENCY (3)")
    parser.add_argument("--stream-workers", type=int, default=2, help="STREAM_CONCURRENCY (2)")
    parser.add_argument("--worker-concurrency", type=int, default=2, help="the Celery pool (2)")
    parser.add_argument("--no-proxy", action="store_true", help="no nginx in front")
    parser.add_argument(
        "--canary-interval", type=float, default=10.0, help="CANARY_INTERVAL_SECONDS (10)"
    )
    parser.add_argument(
        "--webhook-busy", type=float, default=0.05, help="share of webhook calls answered 503"
    )
    parser.add_argument(
        "--keep", action="store_true", help="keep the run's folder (logs, records.json)"
    )
    args = parser.parse_args(argv)
    if args.handhelds < 1 or args.minutes <= 0 or args.minutes > 60:
        parser.error("--handhelds at least 1, --minutes above 0 and at most 60")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    warehouses = args.warehouses or max(2, min(8, -(-args.handhelds // 50)))
    folder = Path(tempfile.mkdtemp(prefix="wms-floor-"))
    started = time.time()
    load_before = _load()
    receiver = Receiver(folder / "tls", busy_share=args.webhook_busy, seed=args.seed)
    redis = shape.start_redis(folder)
    database_url = args.database_url or f"sqlite:///{folder / 'floor.sqlite3'}"
    env = shape.environment(
        folder,
        redis_url=redis.url,
        database_url=database_url,
        ALERT_WEBHOOK_ALLOWED_HOSTS=receiver.host,
        REQUESTS_CA_BUNDLE=str(receiver.ca),
        CANARY_INTERVAL_SECONDS=str(args.canary_interval),
        EMAIL_BACKEND="django.core.mail.backends.locmem.EmailBackend",
    )
    for name in shape.NOT_PASSED:  # this process reads and writes the same database and Redis
        os.environ.pop(name, None)
    os.environ.update(env)
    servers = shape.Shape(
        folder=folder, redis=redis, env=env, web_port=free_port(), stream_port=free_port()
    )
    say(
        f"Floor simulation: {args.handhelds} handhelds over {warehouses} warehouses, a shift of "
        f"{args.minutes:g} min{' with faults' if args.faults else ''}; {os.cpu_count()} cores "
        f"(load average {load_before}), everything on this machine; logs in {folder}"
    )
    outcome: dict[str, Any] = {}
    try:
        seeded = prepare(args, warehouses, receiver, database_url)
        receiver.secret = seeded.pop("secret")
        sizes = shape.Sizes(
            web=args.web_workers,
            stream=args.stream_workers,
            worker=args.worker_concurrency,
            proxy=not args.no_proxy,
        )
        began = time.monotonic()
        servers.start_servers(sizes)
        proxy = "nginx in front" if servers.proxy_port else "no nginx (not installed)"
        say(f"servers up in {time.monotonic() - began:.0f} s ({proxy})")
        plan = Plan(
            api_base=servers.api_base,
            stream_base=servers.stream_base,
            network=Network(),
            seed=args.seed,
            rate_per_minute=args.rate,
            critical_share=args.critical,
            **seeded,
        )
        outcome = shift(args, plan, servers, receiver)
    finally:
        for process in outcome.get("children", []):
            if process.is_alive():
                process.kill()
        servers.stop()
        receiver.stop()
    report = build_report(args, warehouses, outcome, receiver, started, load_before)
    if args.keep:
        progress = outcome.get("progress")
        raw = {
            "published": getattr(progress, "published_records", None),
            "devices": getattr(progress, "devices", None),
        }
        (folder / "records.json").write_text(json.dumps(raw, default=str))
    print_report(report)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1, default=str))
        say(f"figures written to {args.json}")
    if not args.keep:
        shutil.rmtree(folder, ignore_errors=True)
    met = report["goals"]
    return 0 if met["nothing_lost"]["met"] and met["nothing_done_twice"]["met"] else 1


def prepare(
    args: argparse.Namespace, warehouses: int, receiver: Receiver, database_url: str
) -> dict[str, Any]:
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    call_command("migrate", verbosity=0)
    if connection.vendor == "sqlite":
        # Several processes write (web, worker, beat): readers then never wait for a writer.
        with connection.cursor() as cursor:
            cursor.execute("PRAGMA journal_mode=WAL")
    seeded = seed.seed(handhelds=args.handhelds, warehouses=warehouses, webhook_url=receiver.url)
    connection.close()
    return seeded


def say(text: str) -> None:
    print(text, flush=True)


def shift(
    args: argparse.Namespace, plan: Plan, servers: shape.Shape, receiver: Receiver
) -> dict[str, Any]:
    """Warm-up, the shift with its change and faults, the drain; what the clients recorded."""
    context = multiprocessing.get_context("spawn")
    control = context.Queue()
    out = context.Queue()
    devices = context.Process(target=handhelds.run, args=(plan, control, out), daemon=True)
    devices.start()
    children = [devices]
    progress = Progress(total=len(plan.handhelds))
    outcome: dict[str, Any] = {"children": children, "faults": [], "progress": progress}

    deadline = time.monotonic() + JOIN_TIMEOUT
    while progress.joined < len(plan.handhelds) and time.monotonic() < deadline:
        progress.take(out, timeout=0.5)
        if not devices.is_alive():
            raise RuntimeError("the handhelds' process ended during the warm-up")
    say(f"{progress.joined} of {len(plan.handhelds)} handhelds following their warehouse")

    start = time.time()
    end = start + args.minutes * 60
    change_at = seed.shift_change(start=start, end=end)
    if change_at is not None:
        seed.add_shifts(plan.warehouses, change_at=change_at)
        from django.db import connection

        connection.close()
    control.put(("shift", change_at))
    publishing = context.Process(target=publisher.run, args=(plan, end, out), daemon=True)
    publishing.start()
    children.append(publishing)
    faults = (
        [
            Fault("redis", start + 0.35 * (end - start)),
            Fault("worker", start + 0.65 * (end - start)),
        ]
        if args.faults
        else []
    )
    outcome.update(start=start, end=end, change_at=change_at, faults=faults)
    say(
        f"shift from {_clock(start)} to {_clock(end)}"
        + (
            f", crews change at {_clock(change_at)}"
            if change_at
            else ", no crew change (too short)"
        )
    )
    next_line = time.monotonic() + PROGRESS_EVERY
    hard_stop = end + publisher.BUDGET + 30
    while progress.published_records is None and time.time() < hard_stop:
        progress.take(out, timeout=0.5)
        for fault in faults:
            if fault.killed_at is None and time.time() >= fault.due:
                inject(fault, servers)
        if time.monotonic() >= next_line:
            next_line = time.monotonic() + PROGRESS_EVERY
            say(progress.line(start, end, receiver, faults))
        if not devices.is_alive():
            raise RuntimeError("the handhelds' process ended during the shift")
    drain_end = time.time() + args.drain
    control.put(("drain",))
    say(f"publishing over; draining for {args.drain:g} s on a good network")
    while time.time() < drain_end:
        progress.take(out, timeout=0.5)
        if time.monotonic() >= next_line:
            next_line = time.monotonic() + PROGRESS_EVERY
            say(progress.line(start, end, receiver, faults))
    control.put(("stop",))
    outcome["ended_at"] = time.time()
    deadline = time.monotonic() + REPORT_TIMEOUT
    while progress.devices is None and time.monotonic() < deadline:
        progress.take(out, timeout=0.5)
    if progress.devices is None:
        raise RuntimeError("the handhelds did not report within two minutes")
    outcome["canaries"] = canaries(plan)
    try:
        outcome["database"] = database_figures()
    except Exception as exc:  # the run's other figures still count
        outcome["database"] = {"error": repr(exc)}
    return outcome


def inject(fault: Fault, servers: shape.Shape) -> None:
    fault.killed_at = time.time()
    if fault.kind == "redis":
        keys = servers.kill_redis()
        say(f"FAULT: Redis killed with SIGKILL ({keys:,} keys); restarting it from its AOF")
        time.sleep(2.0)
        fault.note = {"keys_before": keys, "keys_after": servers.restart_redis()}
    else:
        servers.processes["worker"].kill()
        say("FAULT: the Celery worker killed with SIGKILL (with its pool); restarting it")
        time.sleep(5.0)
        servers.restart("worker")
    fault.back_at = time.time()
    say(f"  back after {fault.back_at - fault.killed_at:.1f} s {fault.note or ''}")


@dataclass
class Progress:
    """The latest status lines of the client processes, and their records at the end."""

    total: int
    handhelds: dict[str, Any] = field(default_factory=dict)
    published: dict[str, Any] = field(default_factory=dict)
    published_records: list[dict[str, Any]] | None = None
    devices: dict[str, Any] | None = None

    @property
    def joined(self) -> int:
        return int(self.handhelds.get("joined", 0))

    def take(self, out: Any, *, timeout: float) -> None:
        try:
            kind, body = out.get(timeout=timeout)
        except queue.Empty:
            return
        if kind == "handhelds":
            self.handhelds = body
        elif kind == "publisher":
            self.published = body
        elif kind == "published":
            self.published_records = body
        elif kind == "done":
            self.devices = body

    def line(self, start: float, end: float, receiver: Receiver, faults: list[Fault]) -> str:
        elapsed = time.time() - start
        modes = self.handhelds.get("modes", {})
        down = [f.kind for f in faults if f.killed_at is not None and f.back_at is None]
        webhook = receiver.figures()
        return (
            f"[{_minutes(elapsed)} / {_minutes(end - start)}] "
            f"alerts {self.published.get('published', 0)} "
            f"({self.published.get('critical', 0)} critical, "
            f"{self.published.get('retried', 0)} retried) · handhelds "
            + ", ".join(f"{n} {mode}" for mode, n in sorted(modes.items()))
            + f" · seen {self.handhelds.get('sightings', 0):,}"
            f" · claimed {self.handhelds.get('claimed', 0)}"
            f" · presses {self.handhelds.get('presses', 0)}"
            f" · webhook runs {webhook['runs_done']}"
            f" · client lag {self.handhelds.get('lag_ms', 0)} ms"
            + (f" · DOWN: {', '.join(down)}" if down else "")
        )


def canaries(plan: Plan) -> dict[str, Any]:
    """The delivery objective's own view of the run (GET /api/v1/delivery/, staff)."""
    request = urllib.request.Request(  # noqa: S310 (http://127.0.0.1, the run's own server)
        f"{plan.api_base}/api/v1/delivery/",
        headers={"Authorization": f"Token {plan.staff_token}", "Accept": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:  # noqa: S310
            body = json.loads(answer.read())
    except OSError as exc:
        return {"error": repr(exc)}
    rows = body.get("results", [])
    hours = [row["hour"] for row in rows]
    return {
        "warehouses": len(rows),
        "statuses": sorted({row["status"] for row in rows}),
        "canaries": sum(h["canaries"] for h in hours),
        "within_objective": sum(h["within_objective"] for h in hours),
        "worst_p99_seconds": max((h["p99"] for h in hours if h["p99"] is not None), default=None),
        "objective": body.get("objective"),
    }


def database_figures() -> dict[str, Any]:
    """Runs per alert and action (a second is an action done twice), their statuses, and
    the shift change's handovers."""
    from django.db import connection
    from django.db.models import Count

    from actions.models import ActionRun
    from shifts.models import Handover

    try:
        per_alert = (
            ActionRun.objects.values("notification_id", "action_id")
            .annotate(n=Count("id"))
            .filter(n__gt=1)
        )
        twice = [f"{row['notification_id']}/{row['action_id']}" for row in per_alert]
        statuses = {
            row["status"]: row["n"]
            for row in ActionRun.objects.values("status").annotate(n=Count("id"))
        }
        handovers = list(Handover.objects.values("role__name", "content"))
    finally:
        connection.close()
    return {
        "runs": statuses,
        "actions_done_twice": len(twice),
        "done_twice": twice[:20],
        "handovers": len(handovers),
        "claims_released_at_the_change": sum(
            _count((h["content"] or {}).get("released")) for h in handovers
        ),
    }


def _count(value: Any) -> int:
    """A handover's count: a number, or a list of what it counts."""
    if isinstance(value, int):
        return value
    return len(value) if isinstance(value, list) else 0


def build_report(
    args: argparse.Namespace,
    warehouses: int,
    outcome: dict[str, Any],
    receiver: Receiver,
    started: float,
    load_before: str,
) -> dict[str, Any]:
    progress: Progress = outcome["progress"]
    records = progress.published_records or []
    alerts = [r for r in records if "id" in r]
    devices = (progress.devices or {}).get("devices", [])
    faults: list[Fault] = outcome.get("faults", [])
    windows = [
        figures.Window(f.kind, f.killed_at, f.back_at + FAULT_SETTLE)
        for f in faults
        if f.killed_at is not None and f.back_at is not None
    ]
    seen = figures.visible(alerts, devices, windows)
    acts = [act for device in devices for act in device["acts"]]
    claimed = figures.claims(alerts, acts, ended_at=outcome.get("ended_at", time.time()))
    webhook = receiver.figures()
    database = outcome.get("database", {})
    done_twice = max(webhook["actions_done_twice"], database.get("actions_done_twice", 0))
    stream_outside = seen["outside_faults"]["stream"]["p99_ms"]
    publish_times = [r["acknowledged"] - r["sent"] for r in alerts]
    lost = seen["lost"]["alerts"]
    goals = {
        "nothing_lost": {"value": lost, "goal": "0", "met": lost == 0},
        "nothing_done_twice": {"value": done_twice, "goal": "0", "met": done_twice == 0},
        "critical_claimed_within_120s": {
            "value": claimed["share"],
            "goal": "≥ 99.9 %",
            "met": claimed["share"] is not None and claimed["share"] >= CLAIM_SHARE_GOAL,
        },
        "stream_p99_outside_faults": {
            "value_ms": stream_outside,
            "goal": f"≤ {OBJECTIVE_SECONDS:g} s (DELIVERY_OBJECTIVE_SECONDS)",
            "met": stream_outside is not None and stream_outside <= OBJECTIVE_SECONDS * 1000,
        },
    }
    return {
        "command": "python -m benchmarks.floor " + " ".join(sys.argv[1:]),
        "date": datetime.fromtimestamp(started, UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": {
            "cores": os.cpu_count(),
            "load_average_before": load_before,
            "load_average_after": _load(),
            "python": platform.python_version(),
            "shared": "client processes and servers on the same machine",
        },
        "run": {
            "handhelds": args.handhelds,
            "warehouses": warehouses,
            "minutes": args.minutes,
            "faults": args.faults,
            "rate_per_minute_per_warehouse": args.rate,
            "critical_share": args.critical,
            "network": asdict(Network()),
            "handhelds_following": sum(1 for d in devices if d["joined_at"] is not None),
            "crew_change_at": _clock(outcome["change_at"]) if outcome.get("change_at") else None,
            "took_seconds": round(time.time() - started),
        },
        "alerts": {
            "published": len(records),
            "acknowledged": len(alerts),
            "not_acknowledged": [r for r in records if "id" not in r][:20],
            "critical": sum(1 for a in alerts if a["severity"] == "critical"),
            "published_after_retries": sum(1 for a in alerts if a["attempts"] > 1),
            "publish_request_p50_ms": _ms(figures.percentile(publish_times, 0.5)),
            "publish_request_p99_ms": _ms(figures.percentile(publish_times, 0.99)),
        },
        "publish_to_visible": seen["all"],
        "publish_to_visible_outside_faults": seen["outside_faults"],
        "critical_claims": claimed,
        "lost": seen["lost"],
        "actions": {"webhook": webhook, "database": database, "operators": figures.operators(acts)},
        "handhelds": figures.counts(devices),
        "client_loop_lag_ms": (progress.devices or {}).get("loop_lag_ms"),
        "faults": [
            {
                "kind": f.kind,
                "killed_at": _clock(f.killed_at) if f.killed_at else None,
                "down_seconds": round(f.back_at - f.killed_at, 1)
                if f.back_at and f.killed_at
                else None,
                **f.note,
            }
            for f in faults
        ],
        "canaries": outcome.get("canaries"),
        "goals": goals,
    }


def print_report(report: dict[str, Any]) -> None:
    run, alerts = report["run"], report["alerts"]
    say("")
    machine = report["machine"]
    say(
        f"{report['command']}   ({report['date']}, {machine['cores']} cores, load average "
        f"{machine['load_average_before']} before, {machine['load_average_after']} after)"
    )
    say(
        f"alerts published {alerts['published']}, acknowledged {alerts['acknowledged']} "
        f"({alerts['critical']} critical, {alerts['published_after_retries']} after retries); "
        f"publish request p50 {alerts['publish_request_p50_ms']} ms, p99 "
        f"{alerts['publish_request_p99_ms']} ms"
    )
    say("publish to visible       count      p50        p99        max")
    for title, block in (
        ("", report["publish_to_visible"]),
        (" outside faults", report["publish_to_visible_outside_faults"]),
    ):
        for path in ("stream", "replay", "poll", "any"):
            row = block[path]
            say(
                f"  {(path + title):<22}{row['count']:>7,}  {_cell(row['p50_ms'])}  "
                f"{_cell(row['p99_ms'])}  {_cell(row['max_ms'])}"
            )
    claims = report["critical_claims"]
    share = "—" if claims["share"] is None else f"{claims['share'] * 100:.1f} %"
    say(
        f"critical alerts claimed within 120 s: {claims['claimed_within_120s']} of "
        f"{claims['due']} due ({share}); time to claim p50 {claims['time_to_claim_p50_s']} s, "
        f"p99 {claims['time_to_claim_p99_s']} s"
    )
    lost = report["lost"]
    say(f"alerts lost: {lost['alerts']} ({lost['pairs']} handheld-alert pairs)")
    webhook, database = report["actions"]["webhook"], report["actions"]["database"]
    say(
        f"actions done twice: {report['goals']['nothing_done_twice']['value']} (webhook: "
        f"{webhook['runs_done']} runs done, {webhook['calls']} calls, "
        f"{webhook['calls_repeated']} repeated with the same key, {webhook['answered_503']} "
        f"answered 503; database: runs {database.get('runs')})"
    )
    operators = report["actions"]["operators"]
    say(
        "operators: "
        + "; ".join(
            f"{kind} {o['made']} ({o['attempts']} attempts, {o['answered_as_replay']} answered "
            f"as replays, answers {o['answers']})"
            for kind, o in operators.items()
        )
    )
    say(f"handhelds: {report['handhelds']}")
    say(
        f"shift change: {run['crew_change_at']}; handovers {database.get('handovers')}, claims "
        f"released {database.get('claims_released_at_the_change')}"
    )
    for fault in report["faults"]:
        say(f"fault: {fault}")
    say(f"canaries: {report['canaries']}")
    say(f"client event loop lag: {report['client_loop_lag_ms']}")
    say("goals:")
    for name, goal in report["goals"].items():
        value = goal.get("value", goal.get("value_ms"))
        say(f"  {name}: {value} (goal {goal['goal']}): {'met' if goal['met'] else 'NOT MET'}")


def _cell(ms: float | None) -> str:
    if ms is None:
        return f"{'—':>9}"
    return f"{ms / 1000:>7.2f} s" if ms >= 1000 else f"{ms:>6.0f} ms"


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds * 1000, 1)


def _clock(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%H:%M:%S")


def _minutes(seconds: float) -> str:
    seconds = max(0, int(seconds))
    return f"{seconds // 60}:{seconds % 60:02d}"


def _load() -> str:
    try:
        return " ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:
        return "?"


if __name__ == "__main__":
    sys.exit(main())
