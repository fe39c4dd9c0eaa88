"""The replicated test cluster after a failover: `restart()` brings the killed master back and
returns once it has synced as its successor's replica, so the next test's writes that wait
for a replica (WAIT) are acknowledged (tests/config/test_failover.py relies on it)."""

from __future__ import annotations

from config.redis import online_replicas
from devredis.embedded_cluster import ClusterNode, EmbeddedCluster
from tests.waiting import eventually


def _in_sync_replicas(cluster: EmbeddedCluster) -> int:
    count = 0
    for node in cluster.nodes:
        info = node.client().info("replication")
        count += info.get("role") == "slave" and info.get("master_link_status") == "up"
    return count


def test_restart_after_a_failover_returns_with_every_replica_in_sync(replicated_cluster):
    cluster = replicated_cluster  # this module's own, whole
    assert _in_sync_replicas(cluster) == 3
    victim = cluster.masters()[0]
    victim.kill()
    assert eventually(lambda: cluster.is_ok() and len(cluster.masters()) == 3, timeout=30)

    cluster.restart()

    assert _in_sync_replicas(cluster) == 3
    # What a publish that waits for a replica checks first, then its WAIT, on every master.
    covered: dict[int, tuple[ClusterNode, str]] = {}
    for i in range(500):
        key = f"probe:{{{i}}}"
        master = cluster.master_of(key)
        covered.setdefault(master.port, (master, key))
        if len(covered) == 3:
            break
    assert len(covered) == 3
    for master, key in covered.values():
        client = master.client()
        assert online_replicas(client) == 1
        client.set(key, "1")
        assert client.execute_command("WAIT", 1, 2000) == 1
