"""`python -m benchmarks.cluster_load`: a bounded load on a real 3-master Redis Cluster, per shard.

Starts a 3-master cluster on loopback from the embedded server binary
(devredis/embedded_cluster.py) for the product's data and a plain embedded Redis for the Celery
broker and the cache, as in production (`REDIS_URL=redis+cluster://…`, `CELERY_BROKER_URL`),
and a throw-away SQLite database. It makes `--warehouses` warehouses of `--operators`
operators each, fills them with `--backlog` notifications, and runs worker processes of
simulated operators and publishers (benchmarks/cluster_workers.py: the product's selectors
and `publish()` through Python, not HTTP) in four phases:

- idle: nothing runs; what the masters spend on their own (cron, cluster bus) per second;
- polls: poll rounds only, back to back, every operator caught up (nothing new);
- mixed: poll rounds, with `--publish-rate` publishes per second spread over the warehouses;
- publishes: publishes only, back to back, to every (type, warehouse) (last, as it grows
  the inboxes the other phases poll).

For each phase and each master it prints the warehouses it holds, its keys, the commands it
processed, the script calls, its CPU time and share of a core, and the spread (max / min over
the masters); then polls/s and publishes/s achieved, p50/p99 latencies, and the Redis cost of
one poll round and one publish, from which docs/performance.md's capacity model is derived.
Everything stops when it ends (or fails, or is interrupted).

    python -m benchmarks.cluster_load [--seconds 60] [--warehouses 12] [--operators 20]
        [--backlog 150] [--processes 2] [--publish-rate 20] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import platform
import queue
import secrets
import shutil
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from benchmarks import cluster_shards, cluster_workers
from benchmarks._setup import percentile
from devredis import embedded_cluster, embedded_redis

# Publishes last: the mixed phase must poll inboxes of the backlog's size, not grown by them.
PHASES = ("polls", "mixed", "publishes")
TYPES = ("LOAD_ALL", "LOAD_PICKERS", "LOAD_SUPERVISORS")  # to every operator, to each role
TTL_SECONDS = 7 * 24 * 3600


@dataclass(frozen=True)
class LoadConfig:
    seconds: float = 60.0  # the four phases together
    warehouses: int = 12
    operators: int = 20  # per warehouse
    backlog: int = 150  # notifications per warehouse before the phases
    processes: int = 2
    publish_rate: float = 20.0  # per second in the mixed phase, over all workers

    @property
    def idle_seconds(self) -> float:
        return min(2.0, self.seconds * 0.05)

    @property
    def phase_seconds(self) -> float:
        return (self.seconds - self.idle_seconds) / len(PHASES)


def run(config: LoadConfig, log=print) -> dict[str, Any]:
    """Start everything, measure every phase, stop everything; the figures as a dict."""
    base = Path(tempfile.mkdtemp(prefix="wms-cluster-load-"))
    cluster = broker = None
    workers: list[multiprocessing.process.BaseProcess] = []
    commands: list[multiprocessing.Queue] = []
    try:
        log(f"starting a 3-master cluster and a broker Redis; {_load()}")
        cluster = embedded_cluster.start_cluster(masters=3)
        broker = embedded_redis.start()
        _configure(cluster.url, broker.url, base)
        operators, targets = _build(config, log)
        placement = _placement(cluster, config)
        masters = {node.port: node.client() for node in cluster.masters()}

        log(f"starting {config.processes} worker processes; catching every operator up")
        context = multiprocessing.get_context("spawn")
        results = context.Queue()
        for i in range(config.processes):
            commands.append(context.Queue())
            worker = context.Process(
                target=cluster_workers.serve,
                args=(operators[i :: config.processes], targets, commands[i], results),
                daemon=True,
            )
            worker.start()
            workers.append(worker)
        for errors in _gather(results, "ready", len(workers), 120 + len(operators)):
            if errors:
                raise RuntimeError(f"a worker could not catch up: {errors[:3]}")

        report: dict[str, Any] = {
            "config": {**asdict(config), "phase_seconds": config.phase_seconds},
            "machine": {
                "cores": os.cpu_count(),
                "load_at_start": _load(),
                "python": platform.python_version(),
                "redis": masters[next(iter(masters))].info("server")["redis_version"],
            },
            "placement": {str(w): port for w, port in placement.items()},
            "phases": {},
        }
        log(f"idle {config.idle_seconds:.1f} s")
        before = _snap(masters)
        time.sleep(config.idle_seconds)  # the interval measured, not a synchronisation
        idle = _shards(masters, placement, before, _snap(masters))
        report["phases"]["idle"] = {"shards": [s.as_dict() for s in idle]}
        for phase in PHASES:
            log(f"{phase} {config.phase_seconds:.1f} s")
            before = _snap(masters)
            for q in commands:
                rate = config.publish_rate / config.processes if phase == "mixed" else 0.0
                q.put(("run", phase, config.phase_seconds, rate))
            tallies = _gather(results, "done", len(workers), config.phase_seconds + 120)
            shards = _shards(masters, placement, before, _snap(masters))
            report["phases"][phase] = _phase_figures(tallies, shards, idle)
        report["costs"] = _costs(report["phases"])
        report["machine"]["load_at_end"] = _load()
        return report
    finally:
        for q in commands:
            q.put(None)
        for process in workers:
            process.join(timeout=10)
            if process.is_alive():
                process.terminate()
                process.join(timeout=5)
        if cluster is not None:
            cluster.stop()
        if broker is not None:
            broker.stop()
        shutil.rmtree(base, ignore_errors=True)


def _configure(cluster_url: str, broker_url: str, base: Path) -> None:
    """Point Django at the cluster, the broker and a new database; the workers inherit it."""
    os.environ["REDIS_URL"] = cluster_url
    os.environ["CELERY_BROKER_URL"] = broker_url
    os.environ["DATABASE_URL"] = f"sqlite:///{base}/load.sqlite3"
    os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings"
    os.environ.setdefault("SECRET_KEY", secrets.token_urlsafe(50))
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def _build(config: LoadConfig, log) -> tuple[list[tuple[int, int]], list[tuple[str, int]]]:
    """Warehouses of operators, half of them pickers and half supervisors. LOAD_ALL goes to
    every operator's own inbox; LOAD_PICKERS and LOAD_SUPERVISORS to one role inbox each. So a
    poll reads two inboxes (own + one role) and a publish reaches `operators` inboxes or one."""
    from django.contrib.auth.models import Group, User

    from benchmarks.context import subscribe, sync_subscriptions
    from notifications.services import publish
    from subscriptions.models import MessageType, Warehouse

    types = [
        MessageType.objects.create(code=code, name=code, default_ttl_seconds=TTL_SECONDS)
        for code in TYPES
    ]
    pickers = Group.objects.create(name="load-pickers")
    supervisors = Group.objects.create(name="load-supervisors")
    operators: list[tuple[int, int]] = []
    warehouses = []
    for w in range(config.warehouses):
        warehouse = Warehouse.objects.create(code=f"LW{w + 1:02d}", name=f"Load {w + 1}")
        warehouses.append(warehouse)
        users = User.objects.bulk_create(
            User(username=f"load-{w + 1}-{i}") for i in range(config.operators)
        )
        for i, user in enumerate(users):
            user.groups.add(pickers if i % 2 == 0 else supervisors)
            operators.append((user.pk, warehouse.pk))
        subscribe(warehouse, types[0], users)
        subscribe(warehouse, types[1], roles=[pickers])
        subscribe(warehouse, types[2], roles=[supervisors])
    sync_subscriptions()
    log(
        f"publishing a backlog of {config.backlog} notifications into each of "
        f"{config.warehouses} warehouses"
    )
    targets = [(t.code, w.pk) for w in warehouses for t in types]
    for warehouse in warehouses:
        for i in range(config.backlog):
            publish(
                message_type=types[i % len(types)].code,
                warehouse=warehouse.pk,
                title=cluster_workers.TITLE,
                body=cluster_workers.BODY,
                data=cluster_workers.DATA,
            )
    return operators, targets


def _placement(cluster: embedded_cluster.EmbeddedCluster, config: LoadConfig) -> dict[int, int]:
    """Warehouse id -> port of the master holding its keys (they share the tag {wh:<id>})."""
    from subscriptions.keys import warehouse_prefix
    from subscriptions.models import Warehouse

    return {
        pk: cluster.master_of(warehouse_prefix(pk)).port
        for pk in Warehouse.objects.order_by("pk").values_list("pk", flat=True)
    }


def _snap(masters: dict[int, Any]) -> dict[int, cluster_shards.Snapshot]:
    return {port: cluster_shards.snapshot(client) for port, client in masters.items()}


def _shards(
    masters: dict[int, Any],
    placement: dict[int, int],
    before: dict[int, cluster_shards.Snapshot],
    after: dict[int, cluster_shards.Snapshot],
) -> list[cluster_shards.ShardDelta]:
    return [
        cluster_shards.delta(
            port, [w for w, p in placement.items() if p == port], before[port], after[port]
        )
        for port in sorted(masters)
    ]


def _gather(results: multiprocessing.Queue, kind: str, count: int, timeout: float) -> list[Any]:
    deadline = time.monotonic() + timeout
    got: list[Any] = []
    while len(got) < count:
        try:
            what, payload = results.get(timeout=max(0.1, deadline - time.monotonic()))
        except queue.Empty:
            raise RuntimeError(f"workers did not report {kind!r} within {timeout:.0f} s") from None
        if what != kind:
            raise RuntimeError(f"a worker reported {what!r} while waiting for {kind!r}")
        got.append(payload)
    return got


def _phase_figures(
    tallies: list[cluster_workers.Tally],
    shards: list[cluster_shards.ShardDelta],
    idle: list[cluster_shards.ShardDelta],
) -> dict[str, Any]:
    seconds = max(s.seconds for s in shards)
    rounds = sum(t.rounds for t in tallies)
    publishes = sum(t.publishes for t in tallies)
    round_ms = [ms for t in tallies for ms in t.round_ms]
    publish_ms = [ms for t in tallies for ms in t.publish_ms]
    errors = [e for t in tallies for e in t.errors]
    # The masters' own work (cron, cluster bus) at the idle phase's rate is not the load's.
    idle_rate = {s.port: s.cpu_share for s in idle}
    load_cpu = sum(max(0.0, s.cpu_s - idle_rate[s.port] * s.seconds) for s in shards)
    return {
        "seconds": seconds,
        "rounds": rounds,
        "reloads": sum(t.reloads for t in tallies),
        "publishes": publishes,
        "deliveries": sum(t.deliveries for t in tallies),
        "errors": len(errors),
        "first_errors": errors[:5],
        "polls_per_s": rounds / seconds,
        "publishes_per_s": publishes / seconds,
        "round_p50_ms": percentile(round_ms, 0.50),
        "round_p99_ms": percentile(round_ms, 0.99),
        "publish_p50_ms": percentile(publish_ms, 0.50),
        "publish_p99_ms": percentile(publish_ms, 0.99),
        "load_cpu_s": load_cpu,
        "shards": [s.as_dict() for s in shards],
        "spread": {
            "commands": cluster_shards.spread([s.commands for s in shards]),
            "script_calls": cluster_shards.spread([s.script_calls for s in shards]),
            "cpu": cluster_shards.spread([s.cpu_s for s in shards]),
        },
    }


def _costs(phases: dict[str, Any]) -> dict[str, float]:
    """Redis's cost of one poll round (nothing new) and of one publish, over all masters."""
    polls, pubs = phases["polls"], phases["publishes"]

    def per(phase: dict[str, Any], count: int, field: str) -> float:
        return sum(s[field] for s in phase["shards"]) / count if count else float("nan")

    cpu_round = polls["load_cpu_s"] * 1e6 / polls["rounds"] if polls["rounds"] else float("nan")
    cpu_pub = pubs["load_cpu_s"] * 1e6 / pubs["publishes"] if pubs["publishes"] else float("nan")
    # A reload (unread summary + a page with read ones) happens only in the mixed phase: its
    # cost is what the mixed phase spent beyond its rounds and publishes at the pure rates.
    mixed = phases["mixed"]
    beyond = (
        mixed["load_cpu_s"] * 1e6
        - mixed["rounds"] * cpu_round
        - mixed["publishes"] * (cpu_pub if pubs["publishes"] else 0.0)
    )
    cpu_reload = beyond / mixed["reloads"] if mixed["reloads"] else float("nan")
    return {
        "cpu_us_per_round": cpu_round,
        "cpu_us_per_reload": cpu_reload,
        "script_us_per_round": per(polls, polls["rounds"], "script_ms") * 1000,
        "script_calls_per_round": per(polls, polls["rounds"], "script_calls"),
        "commands_per_round": per(polls, polls["rounds"], "commands"),
        "cpu_us_per_publish": cpu_pub,
        "script_us_per_publish": per(pubs, pubs["publishes"], "script_ms") * 1000,
        "deliveries_per_publish": (
            pubs["deliveries"] / pubs["publishes"] if pubs["publishes"] else float("nan")
        ),
        "operators_per_core_at_10s": 10e6 / cpu_round if cpu_round else float("nan"),
        "publishes_per_core": 1e6 / cpu_pub if cpu_pub else float("nan"),
    }


def _load() -> str:
    try:
        return "load average " + " ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:
        return "load average unknown"


# --- The printed report ----------------------------------------------------------------------


def format_report(report: dict[str, Any]) -> str:
    config, machine, costs = report["config"], report["machine"], report["costs"]
    out = [
        f"`python -m benchmarks.cluster_load` ({config['warehouses']} warehouses x "
        f"{config['operators']} operators, backlog {config['backlog']}, "
        f"{config['processes']} worker process(es), {config['phase_seconds']:.0f} s per phase): "
        f"{machine['cores']} cores, {machine['load_at_start']} at the start, "
        f"{machine['load_at_end']} at the end; Python {machine['python']}, "
        f"Redis {machine['redis']} (embedded, 3 masters).",
        "",
        "| phase | master | warehouses | keys | commands | script calls | script time | "
        "CPU | share of a core |",
        "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, phase in report["phases"].items():
        for s in phase["shards"]:
            out.append(
                f"| {name} | :{s['port']} | {len(s['warehouses'])} "
                f"({', '.join(map(str, s['warehouses']))}) | {s['keys']:,} | {s['commands']:,} "
                f"| {s['script_calls']:,} | {s['script_ms']:,.0f} ms | {s['cpu_s']:.2f} s "
                f"| {s['cpu_share']:.0%} |"
            )
    out += [
        "",
        "| phase | poll rounds/s | round p50 / p99 | publishes/s | publish p50 / p99 | "
        "spread of commands | of script calls | of CPU | errors |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name in PHASES:
        p = report["phases"][name]
        out.append(
            f"| {name} | {p['polls_per_s']:,.0f} | {p['round_p50_ms']:.1f} / "
            f"{p['round_p99_ms']:.1f} ms | {p['publishes_per_s']:,.1f} | "
            f"{p['publish_p50_ms']:.1f} / {p['publish_p99_ms']:.1f} ms | "
            f"{p['spread']['commands']:.2f}x | {p['spread']['script_calls']:.2f}x | "
            f"{p['spread']['cpu']:.2f}x | {p['errors']} |"
        )
    out += [
        "",
        f"Redis per poll round (nothing new): {costs['cpu_us_per_round']:.0f} µs CPU, "
        f"{costs['script_us_per_round']:.0f} µs inside scripts, "
        f"{costs['script_calls_per_round']:.2f} script calls, "
        f"{costs['commands_per_round']:.1f} commands; per reload (summary + page of 200 with "
        f"read ones, mixed phase, beyond its rounds and publishes): "
        f"{costs['cpu_us_per_reload']:.0f} µs CPU.",
        f"Redis per publish ({costs['deliveries_per_publish']:.1f} inboxes on average): "
        f"{costs['cpu_us_per_publish']:.0f} µs CPU, "
        f"{costs['script_us_per_publish']:.0f} µs inside scripts.",
        f"One Redis core: {costs['operators_per_core_at_10s']:,.0f} operators polling every 10 s, "
        f"or {costs['publishes_per_core']:,.0f} publishes/s (CPU figures, idle rate "
        "subtracted).",
    ]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.cluster_load", description=__doc__.split("\n\n")[0]
    )
    defaults = LoadConfig()
    parser.add_argument(
        "--seconds",
        type=float,
        default=defaults.seconds,
        help="all phases together (default %(default)s)",
    )
    parser.add_argument("--warehouses", type=int, default=defaults.warehouses)
    parser.add_argument(
        "--operators",
        type=int,
        default=defaults.operators,
        help="per warehouse (default %(default)s)",
    )
    parser.add_argument(
        "--backlog",
        type=int,
        default=defaults.backlog,
        help="notifications per warehouse before the phases (default %(default)s)",
    )
    parser.add_argument(
        "--processes",
        type=int,
        default=defaults.processes,
        help="worker processes (default %(default)s)",
    )
    parser.add_argument(
        "--publish-rate",
        type=float,
        default=defaults.publish_rate,
        help="publishes per second in the mixed phase (default %(default)s)",
    )
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    options = parser.parse_args(argv)
    config = LoadConfig(
        seconds=options.seconds,
        warehouses=options.warehouses,
        operators=options.operators,
        backlog=options.backlog,
        processes=options.processes,
        publish_rate=options.publish_rate,
    )
    if min(config.warehouses, config.operators, config.processes) < 1 or config.seconds <= 0:
        parser.error("--seconds, --warehouses, --operators and --processes must be positive")
    began = time.monotonic()
    report = run(config, log=lambda text: print(f"  · {text}", flush=True))
    print(format_report(report))
    print(f"\nRun took {time.monotonic() - began:.0f} s.")
    if options.json:
        options.json.write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
