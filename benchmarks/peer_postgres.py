"""A PostgreSQL server of its own for the peer's data (rows 14 and 15), outside the checkout.

    python -m benchmarks.peer_postgres start [--data DIR] [--port PORT]
    python -m benchmarks.peer_postgres status|stop [--data DIR]

`start` makes the cluster if DIR holds none (`initdb`), starts it if it is not running, makes
the role and the database `bench_peer` if they are missing, and prints one line on stdout,
`export PEER_DATABASE_URL=postgres://bench_peer:bench_peer@127.0.0.1:PORT/bench_peer`, so
`eval "$(.venv/bin/python -m benchmarks.peer_postgres start)"` sets it; progress goes to stderr.
Every step is skipped when already done, so it is safe to run before every benchmark.

The server listens on loopback only (TCP with a password) and on a socket inside DIR, which
only its owner can open (trusted: that is how this script makes the role). DIR defaults to
`peer-pg` next to the checkout, outside the repository, so every checkout on the machine
shares one server and its loaded data. PostgreSQL refuses to run as root: run by root, every
PostgreSQL command runs as the `postgres` user (`--user`), which then owns DIR.

The binaries are `--bin`, else the directory of `pg_ctl` on the PATH (symlinks followed),
else the newest /usr/lib/postgresql/*/bin (Debian's layout).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

from benchmarks.peer_venv import ROOT

DATA = ROOT.parent / "peer-pg"
PORT = 5499
NAME = "bench_peer"  # the role, its password and the database
SUPERUSER = "postgres"  # the cluster's superuser, as initdb names it here


def url(port: int) -> str:
    return f"postgres://{NAME}:{NAME}@127.0.0.1:{port}/{NAME}"


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def find_bin(given: str | None) -> Path:
    """The directory holding pg_ctl, initdb and psql."""
    candidates: list[Path] = []
    if given:
        candidates.append(Path(given))
    on_path = shutil.which("pg_ctl")
    if on_path:
        candidates.append(Path(on_path).resolve().parent)
    versions = Path("/usr/lib/postgresql").glob("*/bin")
    candidates += sorted(
        versions, key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0, reverse=True
    )
    for directory in candidates:
        if all((directory / tool).exists() for tool in ("pg_ctl", "initdb", "psql")):
            return directory
    raise SystemExit("no PostgreSQL binaries (pg_ctl, initdb, psql) found: pass --bin DIR")


class Cluster:
    def __init__(self, bin_dir: Path, data: Path, port: int, user: str) -> None:
        self.bin = bin_dir
        self.data = data
        self.port = port
        # Root runs every PostgreSQL command as `user`; anyone else runs them as themselves.
        self.user = user if os.geteuid() == 0 else None

    def run(self, tool: str, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        command = [str(self.bin / tool), *args]
        if self.user:
            command = ["runuser", "-u", self.user, "--", *command]
        result = subprocess.run(command, capture_output=True, text=True, cwd="/")
        if check and result.returncode != 0:
            raise SystemExit(
                f"{tool} failed ({result.returncode}):\n{result.stdout}{result.stderr}"
            )
        return result

    def sql(self, statement: str) -> str:
        """One statement as the superuser, over the socket in the data directory."""
        args = ["-h", str(self.data), "-p", str(self.port), "-U", SUPERUSER, "-d", "postgres"]
        return self.run("psql", *args, "-XtAqc", statement).stdout.strip()

    def initialised(self) -> bool:
        return (self.data / "PG_VERSION").exists()

    def running(self) -> bool:
        return self.run("pg_ctl", "-D", str(self.data), "status", check=False).returncode == 0

    def init(self) -> None:
        say(f"making a PostgreSQL cluster in {self.data}")
        self.data.mkdir(parents=True, exist_ok=True)
        if self.user:
            shutil.chown(self.data, self.user, self.user)
        self.data.chmod(0o700)
        self.run(
            "initdb",
            "-D", str(self.data),
            "-U", SUPERUSER,
            "-E", "UTF8",
            "--locale=C",
            # The socket lives in the data directory (mode 700): only its owner reaches it.
            "--auth-local=trust",
            "--auth-host=scram-sha-256",
        )  # fmt: skip

    def start(self) -> None:
        say(f"starting PostgreSQL on 127.0.0.1:{self.port} (log: {self.data / 'server.log'})")
        options = f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.data}"
        log = str(self.data / "server.log")
        self.run("pg_ctl", "-D", str(self.data), "-l", log, "-o", options, "-w", "start")

    def stop(self) -> None:
        self.run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")

    def running_port(self) -> int | None:
        """The port the running server took (postmaster.pid's fourth line)."""
        try:
            return int((self.data / "postmaster.pid").read_text().splitlines()[3])
        except (OSError, IndexError, ValueError):
            return None

    def ensure_database(self) -> None:
        # Literal statements: NAME is the one name for all three (role, password, database).
        if not self.sql("SELECT 1 FROM pg_roles WHERE rolname = 'bench_peer'"):
            say(f"making the role {NAME}")
            self.sql("CREATE ROLE bench_peer LOGIN PASSWORD 'bench_peer'")
        if not self.sql("SELECT 1 FROM pg_database WHERE datname = 'bench_peer'"):
            say(f"making the database {NAME}")
            self.sql("CREATE DATABASE bench_peer OWNER bench_peer")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.peer_postgres", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("action", choices=["start", "status", "stop"])
    parser.add_argument("--data", type=Path, default=DATA, help=f"data directory ({DATA})")
    parser.add_argument("--port", type=int, default=PORT, help=f"TCP port ({PORT})")
    parser.add_argument("--bin", help="directory of pg_ctl, initdb and psql")
    parser.add_argument("--user", default="postgres", help="who runs it when root (postgres)")
    options = parser.parse_args(argv)
    cluster = Cluster(find_bin(options.bin), options.data.resolve(), options.port, options.user)
    if options.action == "status":
        state = "running" if cluster.initialised() and cluster.running() else "not running"
        port = cluster.running_port()
        say(f"{cluster.data}: {state}" + (f", {url(port)}" if state == "running" and port else ""))
        raise SystemExit(0 if state == "running" else 3)
    if options.action == "stop":
        if cluster.initialised() and cluster.running():
            cluster.stop()
        say(f"{cluster.data}: stopped")
        return
    if not cluster.initialised():
        cluster.init()
    if cluster.running():
        cluster.port = cluster.running_port() or cluster.port
        say(f"PostgreSQL is already running in {cluster.data} on port {cluster.port}")
    else:
        cluster.start()
    cluster.ensure_database()
    print(f"export PEER_DATABASE_URL={url(cluster.port)}", flush=True)


if __name__ == "__main__":
    main()
