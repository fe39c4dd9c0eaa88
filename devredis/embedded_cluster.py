"""Starts a real Redis Cluster on loopback from the embedded server binary (tests, trials).

The cluster is built with plain commands, the way `redis-cli --cluster create` builds one:
every master takes an even share of the 16384 slots (CLUSTER ADDSLOTS), the nodes are
introduced (CLUSTER MEET), replicas follow their master (CLUSTER REPLICATE), and we wait until
every node reports `cluster_state:ok`.
"""

from __future__ import annotations

import random
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import redis

from devredis.embedded_redis import port_is_free, redis_server_binary, wait_until_ready

SLOTS = 16384


@dataclass
class ClusterNode:
    """One redis-server process of the cluster."""

    port: int
    data_dir: Path
    node_timeout_ms: int
    process: subprocess.Popen[bytes] = field(repr=False)

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def client(self) -> redis.Redis:
        return redis.Redis(port=self.port, socket_connect_timeout=1, socket_timeout=5)

    @property
    def running(self) -> bool:
        return self.process.poll() is None

    def kill(self) -> None:
        """Kill the process at once (SIGKILL), as a crashed machine would stop."""
        if self.running:
            self.process.kill()
            self.process.wait()

    def stop(self) -> None:
        if self.running:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()


@dataclass
class EmbeddedCluster:
    """Running cluster nodes; the first `masters` started as masters, the rest as replicas."""

    nodes: list[ClusterNode]
    base_dir: Path
    masters_count: int = 0  # as started; 0: every node

    @property
    def url(self) -> str:
        """The REDIS_URL that points the product at this cluster."""
        return "redis+cluster://" + ",".join(n.address for n in self.nodes if n.running)

    def masters(self) -> list[ClusterNode]:
        """The running nodes that are masters now (this changes after a failover)."""
        found = []
        for node in self.nodes:
            if node.running and node.client().info("replication")["role"] == "master":
                found.append(node)
        return found

    def master_of(self, key: str) -> ClusterNode:
        """The running master that serves `key`'s slot now (as the cluster itself reports it)."""
        client = self.masters()[0].client()
        slot = int(client.execute_command("CLUSTER KEYSLOT", key))
        for start, end, master, *_replicas in client.execute_command("CLUSTER SLOTS"):
            if int(start) <= slot <= int(end):
                port = int(master[1])
                return next(n for n in self.nodes if n.port == port and n.running)
        raise LookupError(f"No running master serves slot {slot}")

    def flush(self) -> None:
        """Empty every master (replicas follow)."""
        for node in self.masters():
            node.client().flushall()

    def is_ok(self) -> bool:
        return all(_cluster_ok(n) for n in self.nodes if n.running)

    def wait_until_ok(self, timeout: float = 30.0) -> None:
        _wait(self.is_ok, timeout, "the cluster to report cluster_state:ok")

    def stop_nodes(self) -> None:
        """Stop every node, keeping their files, for an outage; `restart()` brings them back."""
        for node in self.nodes:
            node.stop()

    def restart(self, timeout: float = 30.0) -> None:
        """Start the stopped nodes again on their ports; each rejoins from its nodes.conf."""
        for node in self.nodes:
            if not node.running:
                node.process = _spawn(node.port, node.data_dir, node.node_timeout_ms)
        for node in self.nodes:
            wait_until_ready(node.process, node.client(), timeout=timeout)
        self.wait_until_ok(timeout)
        self.wait_until_replicas_sync(timeout)

    def wait_until_replicas_sync(self, timeout: float = 30.0) -> None:
        """Until every node beyond the masters is a replica whose link to its master is up (a
        node back after a failover rejoins as a replica and syncs first: until then a write
        that waits for a replica, WAIT, is not acknowledged)."""
        wanted = len(self.nodes) - self.masters_count if self.masters_count else 0
        if wanted <= 0:
            return

        def synced() -> bool:
            try:
                return sum(_replica_in_sync(n.client()) for n in self.nodes if n.running) >= wanted
            except redis.RedisError:
                return False

        _wait(synced, timeout, "the replicas to sync")

    def stop(self) -> None:
        """Stop every node and delete their files."""
        self.stop_nodes()
        shutil.rmtree(self.base_dir, ignore_errors=True)


def _cluster_info(client: redis.Redis) -> dict[str, str]:
    """CLUSTER INFO as text fields (redis-py parses it into a dict)."""
    info = client.cluster("INFO")
    return {str(k): str(v) for k, v in info.items()}


def _cluster_ok(node: ClusterNode) -> bool:
    try:
        return _cluster_info(node.client()).get("cluster_state") == "ok"
    except redis.RedisError:
        return False


def _free_cluster_port() -> int:
    """A free port whose cluster bus port (port + 10000) is free too, both below 65536."""
    for _ in range(200):
        port = random.randint(20000, 50000)
        if port_is_free(port) and port_is_free(port + 10000):
            return port
    raise RuntimeError("No free pair of ports for a cluster node")


def _wait(condition, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise RuntimeError(f"Timed out waiting for {what}")
        time.sleep(0.05)


def _spawn(port: int, data_dir: Path, node_timeout_ms: int) -> subprocess.Popen[bytes]:
    args = [
        redis_server_binary(),
        "--port",
        str(port),
        "--bind",
        "127.0.0.1",
        "--dir",
        str(data_dir),
        "--cluster-enabled",
        "yes",
        "--cluster-config-file",
        "nodes.conf",
        "--cluster-node-timeout",
        str(node_timeout_ms),
        "--appendonly",
        "no",
        "--save",
        "",
        "--loglevel",
        "warning",
    ]
    return subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _start_node(
    data_dir: Path, node_timeout_ms: int, timeout: float, attempts: int = 5
) -> ClusterNode:
    """One node on a free port, answering PING. A port found free can be taken by another
    process before redis-server binds it (it then exits at once): try another port."""
    for attempt in range(attempts):
        shutil.rmtree(data_dir, ignore_errors=True)
        data_dir.mkdir()
        port = _free_cluster_port()
        node = ClusterNode(port, data_dir, node_timeout_ms, _spawn(port, data_dir, node_timeout_ms))
        try:
            wait_until_ready(node.process, node.client(), timeout=timeout)
        except RuntimeError:
            if node.process.poll() is None or attempt == attempts - 1:
                node.process.kill()
                raise
            continue
        return node
    raise AssertionError("unreachable")


def start_cluster(
    *, masters: int = 3, replicas: int = 0, node_timeout_ms: int = 1000, timeout: float = 30.0
) -> EmbeddedCluster:
    """Start `masters` masters with `replicas` replicas each and return once the cluster is ok."""
    base_dir = Path(tempfile.mkdtemp(prefix="wms-redis-cluster-"))
    nodes: list[ClusterNode] = []
    cluster = EmbeddedCluster(nodes=nodes, base_dir=base_dir, masters_count=masters)
    try:
        for i in range(masters * (1 + replicas)):
            nodes.append(_start_node(base_dir / f"node-{i}", node_timeout_ms, timeout))
        clients = [node.client() for node in nodes]
        # Even shares of the slots, the last master taking the remainder.
        share = SLOTS // masters
        for i in range(masters):
            end = SLOTS if i == masters - 1 else (i + 1) * share
            clients[i].execute_command("CLUSTER ADDSLOTS", *range(i * share, end))
        for node in nodes[1:]:
            clients[0].execute_command("CLUSTER MEET", "127.0.0.1", node.port)
        _wait(
            lambda: all(_known_nodes(c) == len(nodes) for c in clients),
            timeout,
            "the nodes to meet",
        )
        master_ids = [_node_id(c) for c in clients[:masters]]
        for i, client in enumerate(clients[masters:]):
            client.execute_command("CLUSTER REPLICATE", master_ids[i % masters])
        cluster.wait_until_ok(timeout)
        cluster.wait_until_replicas_sync(timeout)
    except BaseException:
        cluster.stop()
        raise
    return cluster


def _known_nodes(client: redis.Redis) -> int:
    return int(_cluster_info(client).get("cluster_known_nodes", 0))


def _node_id(client: redis.Redis) -> str:
    node_id = client.execute_command("CLUSTER MYID")
    return node_id.decode() if isinstance(node_id, bytes) else str(node_id)


def _replica_in_sync(client: redis.Redis) -> bool:
    info = client.info("replication")
    return info.get("role") == "slave" and info.get("master_link_status") == "up"


def main() -> None:
    """`python -m devredis.embedded_cluster [--replicas N]`: a local cluster to try things on."""
    import argparse
    import signal

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--masters", type=int, default=3)
    parser.add_argument("--replicas", type=int, default=0)
    options = parser.parse_args()
    cluster = start_cluster(masters=options.masters, replicas=options.replicas)
    # Blocked only now: the servers must not inherit a mask that ignores SIGTERM.
    stop_signals = {signal.SIGINT, signal.SIGTERM}
    signal.pthread_sigmask(signal.SIG_BLOCK, stop_signals)  # so sigwait below receives them
    print(f"REDIS_URL={cluster.url}", flush=True)
    try:
        signal.sigwait(stop_signals)
    finally:
        cluster.stop()


if __name__ == "__main__":
    main()
