"""The Redis connection the apps use for their data, the loader for their Lua scripts, and
`Batch`, which sends many single-slot calls together on one Redis or on a Redis Cluster.

With `REDIS_URL=redis+cluster://…` (or `REDIS_CLUSTER=1`) `get_redis()` is a redis-py
`RedisCluster`; otherwise it is the plain client of django-redis's pool. Code that needs several
calls in one round trip uses `Batch`, never a pipeline: redis-py's cluster pipeline refuses
EVALSHA, and every script call must still go to the master that owns its keys' slot.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings
from django_redis import get_redis_connection
from redis import Redis
from redis.backoff import NoBackoff
from redis.cluster import ClusterNode, RedisCluster
from redis.commands.core import Script

# Errors that mean "Redis is unreachable right now" rather than "the code is wrong".
from redis.exceptions import (
    AskError,
    MovedError,
    NoScriptError,
    RedisClusterException,
    RedisError,
    ResponseError,
)
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from redis.retry import Retry

from config import metrics, status
from config.redis_connections import CountingConnection

# Every error Redis (or the client talking to it) can raise: unreachable, timeout, out of
# memory, a read-only replica after a failover, a busy script, cluster redirections and
# outages, a script failing on data it did not expect. None of them is the client's fault, and
# each may pass once Redis recovers, so callers treat them all alike: 503 and retry later
# (the API), log and let a sweep or the reconcile repair (background work). redis-py raises some
# cluster errors outside the RedisError family, so they are named too.
REDIS_UNAVAILABLE: tuple[type[Exception], ...] = (RedisError, RedisClusterException)

logger = logging.getLogger(__name__)


class NotReplicated(RedisTimeoutError):
    """REDIS_WAIT_POLICY=refuse: a write was not acknowledged by REDIS_WAIT_REPLICAS replicas
    within the time allowed, or was not tried because its master has too few replicas.

    `stored` says which: the master has it (a failover before a replica copies it would lose
    it; a retry with the same Idempotency-Key finds it), or nothing was written. The caller
    answers as for an unavailable Redis (503) and the client may retry.
    """

    def __init__(self, message: str, *, stored: bool) -> None:
        super().__init__(message)
        self.stored = stored


# The name of replication in /healthz (config.status): writes go unconfirmed by replicas.
REPLICATION = "replication"
# How long /healthz reports a write that went unconfirmed (REDIS_WAIT_POLICY=degrade).
SHORTFALL_ALARM_SECONDS = 60.0


def online_replicas(client: Redis) -> int:
    """How many replicas are connected to this master and online (INFO replication)."""
    info = client.info("replication")
    return sum(
        1
        for name, value in info.items()
        if str(name).startswith("slave")
        and isinstance(value, dict)
        and value.get("state") == "online"
    )


def get_redis() -> Redis | RedisCluster:
    """The client for the product's data: a RedisCluster in cluster mode, else the shared
    client of django-redis's pool (timeouts come from settings)."""
    if settings.REDIS_CLUSTER:
        return _cluster_client()
    client: Redis = get_redis_connection("default")  # django-redis is untyped
    return client


# --- Redis Cluster ---------------------------------------------------------------------------

_clusters: dict[tuple[Any, ...], RedisCluster] = {}
_clusters_lock = threading.Lock()

# Texts of the RedisClusterException redis-py raises when it cannot (re)load the slot map:
# the cluster is unreachable or mid-failover, not a bug in the caller.
_TOPOLOGY_FAILURES = (
    "Redis Cluster cannot be connected",
    "All slots are not covered",
    "startup_nodes could not agree",
)


def _is_unreachable(exc: RedisClusterException) -> bool:
    return isinstance(exc.__cause__, REDIS_UNAVAILABLE) or str(exc).startswith(_TOPOLOGY_FAILURES)


class _ProductCluster(RedisCluster):
    """RedisCluster that reports an unreachable cluster as a ConnectionError (so the API
    answers 503), keeping every other RedisClusterException (e.g. a cross-slot call: a bug)."""

    def execute_command(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().execute_command(*args, **kwargs)
        except RedisClusterException as exc:
            if _is_unreachable(exc):
                raise RedisConnectionError(str(exc)) from exc
            raise


def _cluster_client() -> RedisCluster:
    config = (
        tuple(settings.REDIS_CLUSTER_NODES),
        settings.REDIS_CLUSTER_OPTIONS.get("username"),
        settings.REDIS_CLUSTER_OPTIONS.get("password"),
        bool(settings.REDIS_CLUSTER_OPTIONS.get("ssl")),
        settings.REDIS_CONNECT_TIMEOUT,
        settings.REDIS_SOCKET_TIMEOUT,
    )
    client = _clusters.get(config)
    if client is not None:
        return client
    with _clusters_lock:
        client = _clusters.get(config)
        if client is None:
            nodes, username, password, ssl, connect_timeout, socket_timeout = config
            try:
                (first_host, first_port), *others = nodes
                client = _ProductCluster(
                    # Given as a URL, the first node makes redis-py build every node's pool from
                    # these keyword arguments, the counting connection class included (TLS
                    # keeps redis-py's SSLConnection, uncounted).
                    url=f"{'rediss' if ssl else 'redis'}://{first_host}:{first_port}/0",
                    startup_nodes=[ClusterNode(host, port) for host, port in others],
                    username=username,
                    password=password,
                    socket_connect_timeout=connect_timeout,
                    socket_timeout=socket_timeout,
                    health_check_interval=30,
                    connection_class=CountingConnection,
                    # Few retries: during a failover a request should fail fast (503, the
                    # client retries later) rather than hold a web worker for many seconds.
                    retry=Retry(NoBackoff(), retries=2),
                )
            except RedisClusterException as exc:
                if _is_unreachable(exc):
                    raise RedisConnectionError(str(exc)) from exc
                raise
            _clusters[config] = client
    return client


def _forget_failed_node(cluster: RedisCluster, node: ClusterNode) -> None:
    """After a connection error on `node`, reload the slot map as redis-py does after its own
    failed commands, so the next request finds the new master after a failover."""
    try:
        cluster.nodes_manager.move_node_to_end_of_cached_nodes(node.name)
        cluster.nodes_manager.initialize(last_failed_node_name=node.name)
    except REDIS_UNAVAILABLE as exc:  # RedisClusterException among them
        logger.warning("Could not reload the Redis Cluster slot map: %s", exc)


def _reload_slots(cluster: RedisCluster) -> None:
    try:
        cluster.nodes_manager.initialize()
    except RedisClusterException as exc:
        if _is_unreachable(exc):
            raise RedisConnectionError(str(exc)) from exc
        raise


# --- Lua scripts -----------------------------------------------------------------------------


def as_text(value: bytes | str) -> str:
    """A reply of Redis as text (clients here do not decode responses)."""
    return value.decode() if isinstance(value, bytes) else value


# redis-py types a reply as the union of every shape it can take (RESP2 or 3, decoded or
# not, with scores or not); the two below know which shape the command asked for.


def texts(reply: Any) -> list[str]:
    """A reply that is a list of members or names (ZRANGE, SMEMBERS, ...) as text."""
    return [as_text(item) for item in reply]


def scored(reply: Any) -> list[tuple[str, float]]:
    """A reply of (member, score) pairs (ZRANGE ... WITHSCORES, ZSCAN) as text and floats."""
    return [(as_text(member), float(score)) for member, score in reply]


def scan_pages(pattern: str, count: int) -> Iterator[list[str]]:
    """Names of the keys matching `pattern`, a page of about `count` at a time.

    Each SCAN call is bounded, and a key may come twice, so what is done with a page must be
    idempotent. On Redis Cluster every master is scanned in turn (one SCAN sees one node).
    """
    client = get_redis()
    nodes = (
        [client.get_redis_connection(node) for node in client.get_primaries()]
        if isinstance(client, RedisCluster)
        else [client]
    )
    for node in nodes:
        cursor = 0
        while True:
            cursor, found = node.scan(cursor=cursor, match=pattern, count=count)
            if found:
                yield [as_text(key) for key in found]
            if cursor == 0:
                break


class LuaScript:
    """A Lua script kept in a `.lua` file and run with EVALSHA (loaded on first use).

    Every key a script touches is passed in `keys`, so Redis Cluster can route the call. On a
    node that does not know the script yet (a new master after a failover, a flushed server)
    redis-py loads it and retries, on one Redis and on every master of a cluster alike.

    `replicated=True` marks a write that must reach REDIS_WAIT_REPLICAS replicas when that
    setting is on (Redis WAIT on the same connection, right after the script).

    A script with preludes (helpers shared by several scripts) is a config.lua_compose.Composed.
    """

    def __init__(self, path: Path, *, replicated: bool = False) -> None:
        self.path = path
        self.source = path.read_text(encoding="utf-8")
        self.replicated = replicated
        self._script: Script | None = None

    @classmethod
    def beside(cls, module_file: str, name: str, *, replicated: bool = False) -> LuaScript:
        """Load `lua/<name>.lua` from the folder of the module that owns the script."""
        folder = Path(module_file).resolve().parent / "lua"
        return cls(folder / f"{name}.lua", replicated=replicated)

    def registered(self) -> Script:
        if self._script is None:
            # The Script object only holds the source and its SHA; each call names its client.
            self._script = get_redis().register_script(self.source)
        return self._script

    def __call__(self, *, keys: Sequence[str], args: Sequence[Any] = (), client: Any = None) -> Any:
        if client is None and self.replicated and settings.REDIS_WAIT_REPLICAS > 0:
            batch = Batch(wait_replicas=settings.REDIS_WAIT_REPLICAS)
            batch.script(self, keys=keys, args=args)
            return batch.execute()[0]
        client = client if client is not None else get_redis()
        script = self.registered()
        # EVALSHA itself: a node that does not know the script answers NOSCRIPT, and it is
        # loaded and sent again.
        try:
            return _one(client, ("EVALSHA", script.sha, len(keys), *keys, *args))
        except NoScriptError:
            script.sha = client.script_load(self.source)
            return _one(client, ("EVALSHA", script.sha, len(keys), *keys, *args))


# --- Batches ---------------------------------------------------------------------------------

# (node, script SHA) this process has loaded: Batch loads a script on a node once, in the same
# pipeline as its first call there.
_loaded: set[tuple[str, str]] = set()


def _node_name(client: Redis) -> str:
    kwargs = client.connection_pool.connection_kwargs
    return f"{kwargs.get('host')}:{kwargs.get('port')}/{kwargs.get('db', 0)}"


@dataclass(frozen=True)
class _Call:
    script: LuaScript | None  # None: a plain command
    keys: tuple[str, ...]
    args: tuple[Any, ...]

    @property
    def slot_key(self) -> str:
        return self.keys[0]

    def command(self) -> tuple[Any, ...]:
        """The command sent for the call. A script's is EVALSHA itself, not redis-py's Script
        (which sends SCRIPT EXISTS for its scripts on every pipeline): a node that does not
        know the script answers NOSCRIPT; Batch loads it and sends the call again."""
        if self.script is not None:
            sha = self.script.registered().sha
            return ("EVALSHA", sha, len(self.keys), *self.keys, *self.args)
        return self.args

    def run_alone(self, cluster: RedisCluster) -> Any:
        if self.script is not None:
            return self.script.registered()(
                keys=list(self.keys), args=list(self.args), client=cluster
            )
        return cluster.execute_command(*self.args)


def _pipelined(client: Redis, commands: Sequence[tuple[Any, ...]]) -> list[Any]:
    """`commands` in one round trip on one connection of the client's pool, each reply as
    redis-py's pipeline (not a transaction) gives it: a command Redis refused is its
    ResponseError in its place, the others through the client's response callbacks. What
    redis-py's Pipeline does, without its per-command bookkeeping (a third of a poll's time in
    redis-py). A connection that fails part-way is dropped (nothing half-read goes back to the
    pool) and the error raised, or retried as the connection's retry policy says, as there."""
    pool = client.connection_pool
    connection = pool.get_connection()
    callbacks = client.response_callbacks

    def send() -> list[Any]:
        connection.send_packed_command(connection.pack_commands(commands))
        replies: list[Any] = []
        for command in commands:
            try:
                reply = connection.read_response()
            except ResponseError as exc:
                replies.append(exc)
                continue
            name = command[0]
            replies.append(callbacks[name](reply) if name in callbacks else reply)
        return replies

    try:
        found: list[Any] = connection.retry.call_with_retry(
            send, lambda _error: connection.disconnect()
        )
        return found
    finally:
        pool.release(connection)


def _one(client: Redis | RedisCluster, command: tuple[Any, ...]) -> Any:
    """One command's reply, its error raised: on one Redis as a batch of one (_pipelined: the
    same reply or error, without redis-py's per-command bookkeeping); a cluster routes it."""
    if isinstance(client, RedisCluster):
        return client.execute_command(*command)
    [reply] = _pipelined(client, [command])
    if isinstance(reply, Exception):
        raise reply
    return reply


class Batch:
    """Script calls and one-key commands sent together; `execute()` returns the replies in the
    order the calls were added, and raises the first error among them.

    On one Redis the batch is one pipeline: one round trip. On Redis Cluster it is one pipeline
    per master owning any of the calls' slots (a round trip per master involved), because
    redis-py's cluster pipeline refuses EVALSHA. Each call touches one slot, as every script here
    does, so nothing is ever split. A call the cluster answers MOVED did not run (its slot
    moved, e.g. after a failover): the slot map is reloaded and the call sent to the new master;
    ASK (a slot half-way through a migration) is followed by redis-py's cluster client.

    Not a transaction: the calls run one after another, interleaved with other clients' calls,
    and a connection error part-way may leave the calls on other masters done.

    `wait_replicas`: after the calls, each connection sends `WAIT n timeout`. Fewer replicas
    acknowledging in time raise NotReplicated with REDIS_WAIT_POLICY=refuse (which also checks
    the master's replicas before writing), and with "degrade" are counted and reported in
    /healthz while the write stands.
    """

    def __init__(self, *, wait_replicas: int = 0, wait_timeout_ms: int | None = None) -> None:
        self._calls: list[_Call] = []
        self.wait_replicas = wait_replicas
        self.wait_timeout_ms = (
            settings.REDIS_WAIT_TIMEOUT_MS if wait_timeout_ms is None else wait_timeout_ms
        )

    def script(self, script: LuaScript, *, keys: Sequence[str], args: Sequence[Any] = ()) -> None:
        self._calls.append(_Call(script, tuple(keys), tuple(args)))

    def command(self, name: str, key: str, *args: Any) -> None:
        """A command whose first argument is a key (any other keys it names share that key's
        hash slot): `command("ZADD", key, "GT", 1, m)`, `command("UNLINK", key, same_slot_key)`."""
        self._calls.append(_Call(None, (key,), (name, key, *args)))

    def __len__(self) -> int:
        return len(self._calls)

    def execute(self) -> list[Any]:
        if not self._calls:
            return []
        client = get_redis()
        if isinstance(client, RedisCluster):
            replies = self._execute_on_cluster(client)
        else:
            replies = self._run_pipeline(client, self._calls, raise_on_error=True)
        for reply in replies:
            if isinstance(reply, Exception):
                raise reply
        return replies

    def _run_pipeline(self, client: Redis, calls: Sequence[_Call], raise_on_error: bool) -> list:
        node = _node_name(client)
        # A script this process has not sent to the node yet is loaded in the same pipeline
        # (SCRIPT LOAD is idempotent), so a call never meets NOSCRIPT in the normal course.
        loads = {
            id(call.script): call.script
            for call in calls
            if call.script is not None and (node, call.script.registered().sha) not in _loaded
        }
        replies = self._send(client, calls, [s.source for s in loads.values() if s])
        _loaded.update((node, s.registered().sha) for s in loads.values() if s)
        missing = [i for i, reply in enumerate(replies) if isinstance(reply, NoScriptError)]
        if missing:
            # The node lost its scripts since (restarted, flushed, failed over): load them and
            # send just those calls again (a NOSCRIPT call did not run; the others in the
            # pipeline did, so those calls now run after them).
            for i, reply in zip(
                missing,
                self._send(
                    client,
                    [calls[i] for i in missing],
                    list({s.source for i in missing if (s := calls[i].script) is not None}),
                ),
                strict=True,
            ):
                replies[i] = reply
        if raise_on_error:
            for reply in replies:
                if isinstance(reply, Exception):
                    raise reply
        return replies

    def _send(self, client: Redis, calls: Sequence[_Call], sources: Sequence[str] = ()) -> list:
        refuse = self.wait_replicas and settings.REDIS_WAIT_POLICY == "refuse"
        if refuse and (online := online_replicas(client)) < self.wait_replicas:
            # A master a failover left without replicas: nothing is written (a round trip
            # more per write, only with this policy).
            metrics.REPLICATION_SHORTFALLS.labels("refused").inc()
            raise NotReplicated(
                f"{_node_name(client)} has {online} of {self.wait_replicas} replicas; "
                "nothing was written",
                stored=False,
            )
        commands: list[tuple[Any, ...]] = [("SCRIPT LOAD", source) for source in sources]
        commands.extend(call.command() for call in calls)
        if self.wait_replicas:
            commands.append(("WAIT", self.wait_replicas, self.wait_timeout_ms))
        replies = _pipelined(client, commands)[len(sources) :]
        if self.wait_replicas:
            acknowledged = replies.pop()
            if isinstance(acknowledged, Exception):
                raise acknowledged
            if int(acknowledged) < self.wait_replicas:
                shortfall = (
                    f"{acknowledged} of {self.wait_replicas} replicas of {_node_name(client)} "
                    f"acknowledged a write within {self.wait_timeout_ms} ms"
                )
                if refuse:
                    metrics.REPLICATION_SHORTFALLS.labels("refused").inc()
                    raise NotReplicated(shortfall, stored=True)
                # degrade: the write stands (refusing would turn a lost replica into an outage
                # of every publish); the operator is told instead.
                metrics.REPLICATION_SHORTFALLS.labels("accepted").inc()
                status.flag(REPLICATION, shortfall, seconds=SHORTFALL_ALARM_SECONDS)
                logger.warning("Accepted a write without its replicas: %s", shortfall)
        return replies

    def _execute_on_cluster(self, cluster: RedisCluster) -> list[Any]:
        replies: list[Any] = [None] * len(self._calls)
        pending = list(range(len(self._calls)))
        for _round in range(3):
            moved: list[int] = []
            by_node: dict[str, tuple[ClusterNode, list[int]]] = {}
            for i in pending:
                node = cluster.get_node_from_key(self._calls[i].slot_key)
                by_node.setdefault(node.name, (node, []))[1].append(i)
            for node, indexes in by_node.values():
                try:
                    out = self._run_pipeline(
                        cluster.get_redis_connection(node),
                        [self._calls[i] for i in indexes],
                        raise_on_error=False,
                    )
                except (RedisConnectionError, RedisTimeoutError) as exc:
                    if not isinstance(exc, NotReplicated):
                        _forget_failed_node(cluster, node)
                    raise
                for i, reply in zip(indexes, out, strict=True):
                    if isinstance(reply, MovedError):
                        moved.append(i)
                    elif isinstance(reply, AskError):
                        replies[i] = self._calls[i].run_alone(cluster)
                    else:
                        replies[i] = reply
            if not moved:
                return replies
            _reload_slots(cluster)
            pending = moved
        for i in pending:  # still moving after three rounds: let redis-py follow it
            replies[i] = self._calls[i].run_alone(cluster)
        return replies
