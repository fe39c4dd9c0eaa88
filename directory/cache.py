"""Who is asking, without the database on every poll: API tokens, users (a token's, a
session's), their roles, the warehouses and the message types (for publish()), from a
per-process cache that is exact.

Every change of a model that something held per process is built from (directory/holdings.py:
users, groups, memberships, permissions, tokens, warehouses, message types, and what features
declare) deletes a version token in Redis (right away and again after
the transaction commits, so no process keeps what a not yet committed change showed); the next
reader puts a new random one (SET NX). Each request reads the version once (one GET, no
database; a session's read brings it along) and a process that sees a new one drops everything
it cached; so a change is seen at the very next request of every process. A poll or a publish
starts from the version the process holds instead, as an unconfirmed Snapshot
(directory/snapshot.py) that the batch reading or writing its data confirms; if it moved on,
that answer is dropped and answered again from a fresh one (directory/held.py).

A fill is stored only if nothing changed while it read the database: after the read, the
version is read again (in Redis, and in this process, under the lock) and must still be the one
the request started with. Otherwise a request that read a token just before it was deleted
could store it after another request had already dropped the cache, and the deleted token
would live on (issue 20, row C).

What is cached are plain values (ids, flags, field values), never model instances: each
request gets fresh `User`, `Token` and `Warehouse` objects built from them, so nothing one
request caches on an instance (Django's permission cache on a user) reaches the next one.

A cache older than `MAX_AGE_SECONDS` is dropped too, in case a change was made past the ORM
(`QuerySet.update`, raw SQL) or its version write failed.
"""

from __future__ import annotations

import dataclasses
import threading
import time
import uuid
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple, NoReturn

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, User
from redis.exceptions import OutOfMemoryError, ReadOnlyError

from config.redis import Batch, as_text, get_redis

from . import snapshot as snapshots
from .keys import version_key
from .snapshot import (
    DirectoryChanged,
    HeldSession,
    Snapshot,
    current_scope,
    request_scope,
    snapshot,
    within_request,
)

MAX_AGE_SECONDS = 300.0

# The start of a version this process made up because Redis refused to store one: Redis never
# holds it, so nothing can be confirmed against it.
_PRIVATE = "uncached-"


def _young(loaded_at: float) -> bool:
    return time.monotonic() - loaded_at < MAX_AGE_SECONDS


def bump() -> None:
    """A change was made: every process drops its cache at its next request, and this one at
    its next read, even within a request that has read the version already (a request that
    creates a message type and then publishes it must find it)."""
    get_redis().delete(version_key())
    request = current_scope()
    if request is not None:
        request.snapshot = None


def _read_version() -> str:
    client = get_redis()
    value = client.get(version_key())
    if value is None:  # a fresh (or emptied) Redis: any token will do, as long as it is new
        try:
            client.set(version_key(), uuid.uuid4().hex, nx=True)
        except (OutOfMemoryError, ReadOnlyError):
            # Redis refuses writes (full, or a replica): read from the database this time. A
            # version of our own drops this process's cache, and nothing read is kept (the
            # one in Redis is not it), so nothing goes stale; sessions (directory.backends)
            # and the admin keep working as they did without this cache.
            return f"{_PRIVATE}{uuid.uuid4().hex}"
        value = client.get(version_key())
    return "" if value is None else as_text(value)


def _still(version: str) -> bool:
    """Whether the version in Redis is still `version` (no change since it was read)."""
    value = get_redis().get(version_key())
    return value is not None and as_text(value) == version


@dataclass(frozen=True)
class Row:
    """The concrete field values of one model row (by attribute name)."""

    values: tuple[tuple[str, Any], ...]

    @classmethod
    def of(cls, instance: Any) -> Row:
        return cls(
            tuple((f.attname, getattr(instance, f.attname)) for f in instance._meta.concrete_fields)
        )

    def get(self, name: str) -> Any:
        for key, value in self.values:
            if key == name:
                return value
        return None

    def build(self, model: Any) -> Any:
        """A new instance of `model` with these values, as if loaded from the database (as
        Django loads a row: by position, in the order `of()` read them, half the time of
        keyword arguments)."""
        return model.from_db(
            "default", [name for name, _ in self.values], [value for _, value in self.values]
        )


class WarehouseRows(NamedTuple):
    """Every warehouse's row, by id and by code (a publish names its warehouse by code)."""

    by_id: dict[int, Row]
    by_code: dict[str, Row]


@dataclass(frozen=True)
class TokenEntry:
    token: Row
    user: Row


class _Cache:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.version = ""
        self.loaded_at = 0.0
        self.tokens: dict[str, TokenEntry] = {}
        self.roles: dict[int, tuple[int, ...]] = {}
        self.users: dict[int, Row | None] = {}  # a session's user by id (None: no such user)
        self.warehouses: WarehouseRows | None = None  # every warehouse, by id and by code
        self.message_types: dict[str, Row] | None = None  # every message type by code
        self.extras: dict[str, Any] = {}  # what features hold on the same version (`held`)

    def sync(self, version: str) -> None:
        now = time.monotonic()
        if version == self.version and now - self.loaded_at < MAX_AGE_SECONDS:
            return
        with self._lock:
            if version == self.version and now - self.loaded_at < MAX_AGE_SECONDS:
                return
            self.version, self.loaded_at = version, now
            self.tokens, self.roles, self.warehouses = {}, {}, None
            self.message_types = None
            self.users = {}
            self.extras = {}

    def held_version(self) -> str | None:
        """The version this cache was loaded at, if it is one Redis may still hold (not a
        private `uncached-` one) and the cache is not past its age; else None."""
        version, loaded_at = self.version, self.loaded_at
        if not version or version.startswith(_PRIVATE) or not _young(loaded_at):
            return None
        return version

    def store(self, version: str, fill: Callable[[], None]) -> None:
        """Keep what a request read from the database (`fill` puts it in) only if the version
        it started with is still current, in Redis and in this process."""
        if not _still(version):
            return
        with self._lock:
            if self.version == version:
                fill()


_cache = _Cache()


def seed(version: str | None) -> None:
    """The version, read by the caller in the same Redis round trip as its own data (the
    session store does): this request then reads it no more. None (not found): nothing is
    seeded and the first use reads it (and puts a new one)."""
    request = current_scope()
    if version is None or request is None or request.snapshot is not None:
        return
    _cache.sync(version)
    request.snapshot = Snapshot(version)


def checked() -> tuple[_Cache, str]:
    """The cache and the version it holds, once the version has been read (once per request,
    on every call elsewhere). Within `holding()`, the version this process holds, not yet
    read from Redis: the request's snapshot is unconfirmed until its data's batch confirms it
    (`read_confirmed`, `confirm_pending`)."""
    request = current_scope()
    if request is not None:
        if request.snapshot is not None:
            return _cache, request.snapshot.version
        if request.may_hold and (held := _cache.held_version()):
            request.snapshot = Snapshot(held, confirmed=False)
            return _cache, held
    version = _read_version()
    _cache.sync(version)
    if request is not None:
        request.snapshot = Snapshot(version)
    return _cache, version


def token(key: str) -> Any | None:
    """A DRF Token with its user (new instances, for this caller only), or None for an
    unknown key."""
    from rest_framework.authtoken.models import Token

    cache, version = checked()
    entry = cache.tokens.get(key)
    if entry is None:
        found = Token.objects.select_related("user").filter(key=key).first()
        if found is None:
            return None
        entry = TokenEntry(Row.of(found), Row.of(found.user))
        cache.store(version, lambda: cache.tokens.__setitem__(key, entry))
    made = entry.token.build(Token)
    made.user = entry.user.build(User)
    return made


@dataclass(frozen=True, slots=True)
class HeldAccess:
    """What this process's cache holds about a token's request, and the snapshot it holds it
    at (unconfirmed)."""

    snapshot: Snapshot
    user: User
    role_ids: list[int]
    warehouse_active: bool


def held_token_access(key: str, warehouse_id: int) -> HeldAccess | None:
    """A token's active user, their roles and whether the warehouse is active, from what the
    cache holds now: no database, no Redis. None when any of it is not held (or the token's
    user is inactive): the caller asks the usual way. The answer is only as good as its
    `snapshot`; the caller must confirm it before it acts on it (the event stream reads the
    version in the same round trip as the warehouse's cursor)."""
    cache = _cache
    with cache._lock:  # one consistent picture: a sync or a fill swaps these under the lock
        version, loaded_at = cache.version, cache.loaded_at
        entry = cache.tokens.get(key)
        roles = None if entry is None else cache.roles.get(entry.user.get("id"))
        warehouses = cache.warehouses
    if not version or not _young(loaded_at) or entry is None or roles is None or warehouses is None:
        return None
    if not entry.user.get("is_active"):
        return None  # the usual way says why
    row = warehouses.by_id.get(int(warehouse_id))
    return HeldAccess(
        snapshot=Snapshot(version, confirmed=False),
        user=entry.user.build(User),
        role_ids=sorted(roles),
        warehouse_active=row is not None and bool(row.get("is_active")),
    )


def _roles_of(user_ids: Collection[int]) -> dict[int, tuple[int, ...]]:
    """Each of these users' roles (group ids), in one query; none for an unknown id."""
    roles: dict[int, list[int]] = {pk: [] for pk in user_ids}
    memberships = User.groups.through.objects.filter(user_id__in=roles)
    for user_id, group_id in memberships.values_list("user_id", "group_id"):
        roles[user_id].append(group_id)
    return {pk: tuple(groups) for pk, groups in roles.items()}


def hold_tokens(keys: Collection[str]) -> None:
    """Read the tokens the cache does not hold, with their users and roles, in two queries
    (not two per token): a burst of event streams opening after a deploy or a change."""
    from rest_framework.authtoken.models import Token

    cache, version = checked()
    missing = [key for key in set(keys) if key not in cache.tokens]
    if not missing:
        return
    found = list(Token.objects.select_related("user").filter(key__in=missing))
    if not found:
        return
    roles = _roles_of({token.user_id for token in found})
    entries = {token.key: TokenEntry(Row.of(token), Row.of(token.user)) for token in found}

    def fill() -> None:
        cache.tokens.update(entries)
        cache.roles.update(roles)

    cache.store(version, fill)


def hold_users(user_ids: Collection[Any]) -> None:
    """Read the users the cache does not hold, and their roles, in two queries (not two per
    user): the sessions' users of a burst of browsers' streams opening at once. (Without
    their roles, each open read its user's roles with a query and a version check of its
    own: a stream process holds the roles only of the users that opened on it before.)"""
    cache, version = checked()
    wanted: set[int] = set()
    for user_id in user_ids:
        try:
            wanted.add(int(user_id))
        except (TypeError, ValueError):
            continue  # `user` answers None for it, as always
    missing = wanted - set(cache.users)
    without_roles = wanted - set(cache.roles)
    if not missing and not without_roles:
        return
    rows: dict[int, Row | None] = dict.fromkeys(missing)
    if missing:
        rows.update((found.pk, Row.of(found)) for found in User.objects.filter(pk__in=missing))
    roles = _roles_of(without_roles) if without_roles else {}

    def fill() -> None:
        cache.users.update(rows)
        cache.roles.update(roles)

    cache.store(version, fill)


def _user_row(pk: int) -> Row | None:
    cache, version = checked()
    if pk in cache.users:
        return cache.users[pk]
    found = User.objects.filter(pk=pk).first()
    row = None if found is None else Row.of(found)
    cache.store(version, lambda: cache.users.__setitem__(pk, row))
    return row


def user(user_id: Any) -> User | None:
    """The user with this id (a new instance, for this caller only; active or not), or None:
    a session's user, as Django's ModelBackend.get_user would read it."""
    try:
        pk = int(user_id)
    except (TypeError, ValueError):
        return None
    row = _user_row(pk)
    return None if row is None else row.build(User)


def role_ids(user: AbstractBaseUser) -> list[int]:
    """The user's roles (groups), as of this request."""
    cache, version = checked()
    found = cache.roles.get(user.pk)
    if found is None:
        read = _roles_of([user.pk])
        cache.store(version, lambda: cache.roles.update(read))
        found = read[user.pk]
    return sorted(found)


def user_is_active(user_id: int) -> bool:
    """Whether a user with this id exists and is active, as of this request."""
    row = _user_row(int(user_id))
    return row is not None and bool(row.get("is_active"))


def _table(name: Literal["warehouses", "message_types"], read: Callable[[], Any]) -> Any:
    """Every row of a table the cache holds whole (its attribute `name`), `read` from the
    database when it holds none yet."""
    cache, version = checked()
    rows = getattr(cache, name)
    if rows is None:
        rows = read()
        cache.store(version, lambda: setattr(cache, name, rows))
    return rows


def _warehouse_table() -> WarehouseRows:
    from subscriptions.models import Warehouse

    def read() -> WarehouseRows:
        by_id = {w.pk: Row.of(w) for w in Warehouse.objects.all()}
        return WarehouseRows(by_id, {row.get("code"): row for row in by_id.values()})

    table: WarehouseRows = _table("warehouses", read)
    return table


def _warehouse_rows() -> dict[int, Row]:
    return _warehouse_table().by_id


def warehouse(warehouse_id: int) -> Any | None:
    """The warehouse with this id, active or not (a new instance), or None."""
    from subscriptions.models import Warehouse

    row = _warehouse_rows().get(int(warehouse_id))
    return None if row is None else row.build(Warehouse)


def warehouse_values(
    names: Sequence[str], *, warehouse_id: int | None = None, code: str | None = None
) -> tuple[Any, ...] | None:
    """Fields of the warehouse with this id or this code, by attribute name (no instance made:
    a publish reads three), or None when there is no such warehouse."""
    table = _warehouse_table()
    if warehouse_id is not None:
        row = table.by_id.get(int(warehouse_id))
    else:
        row = table.by_code.get(code or "")
    return None if row is None else tuple(row.get(name) for name in names)


def active_warehouse(warehouse_id: int) -> Any | None:
    """The active warehouse with this id (a new instance), or None."""
    row = _active_warehouse_row(warehouse_id)
    if row is None:
        return None
    from subscriptions.models import Warehouse

    return row.build(Warehouse)


def is_active_warehouse(warehouse_id: int) -> bool:
    """Whether a warehouse with this id exists and is active (no instance made)."""
    return _active_warehouse_row(warehouse_id) is not None


def _active_warehouse_row(warehouse_id: int) -> Row | None:
    row = _warehouse_rows().get(int(warehouse_id))
    return row if row is not None and row.get("is_active") else None


def _message_type_rows() -> dict[str, Row]:
    from subscriptions.models import MessageType

    rows: dict[str, Row] = _table(
        "message_types", lambda: {t.code: Row.of(t) for t in MessageType.objects.all()}
    )
    return rows


def message_type(code: str) -> Any | None:
    """The message type with this code, active or not (a new instance), or None."""
    from subscriptions.models import MessageType

    row = _message_type_rows().get(code)
    return None if row is None else row.build(MessageType)


def message_type_values(code: str, names: Sequence[str]) -> tuple[Any, ...] | None:
    """Fields of the message type with this code, by attribute name (no instance made: a
    publish's follow-ups read three), or None when there is no such type."""
    row = _message_type_rows().get(code)
    return None if row is None else tuple(row.get(name) for name in names)


def held(name: str, load: Callable[[], Any]) -> Any:
    """What a feature keeps on the directory's version (e.g. alert actions by message type):
    `load()`'s value, read from the database once per version and process and dropped with
    the rest of the cache. The value must be immutable (it is shared between requests) and not
    None (None reads as "not held"). Features declare a holding (directory/holdings.py), which
    calls this and replaces the version on every change of the models it is built from."""
    cache, version = checked()
    found = cache.extras.get(name)
    if found is None:
        found = load()
        cache.store(version, lambda: cache.extras.__setitem__(name, found))
    return found


def forget_held(name: str) -> None:
    """Drop what `held` keeps under `name` (tests)."""
    with _cache._lock:
        _cache.extras.pop(name, None)


def held_now(name: str) -> Any | None:
    """What `held` keeps under `name` now, without reading the version (no Redis, no
    database): for code that cannot wait on either (the event stream's loop); may be stale by
    the time between a change and this process's next request."""
    return _cache.extras.get(name)


@contextmanager
def scope() -> Iterator[None]:
    """Read the version at most once within this block, or not at all if the caller is
    already within a request's scope (publish() from a view, a rule or a task)."""
    if within_request():
        yield
        return
    with request_scope():
        yield


def holding() -> AbstractContextManager[None]:
    """Within a request's scope, answer from the version this process holds, without reading
    it first, and from the browser's session as this process last read it (`held_session`):
    one Redis round trip fewer per poll. The request's snapshot is then unconfirmed: the one
    batch that reads its data confirms it (`read_confirmed`), or `confirm_pending` on its own;
    either raises DirectoryChanged when it moved on (directory/held.py answers again).

    On Redis Cluster the version lives on another master than a warehouse's data, so a
    confirmation would cost the round trip it saves: there this block changes nothing.
    """
    return snapshots.holding(enabled=not settings.REDIS_CLUSTER)


# Sessions as this process last read them from Redis (cache key -> the stored bytes), for
# requests within `holding()` to start from; at most SESSIONS_HELD, dropped all at once when full.
SESSIONS_HELD = 10_000
_sessions: dict[str, bytes] = {}


def hold_session(key: str, raw: bytes) -> None:
    """Remember a session as it was just read from Redis."""
    if len(_sessions) >= SESSIONS_HELD:
        _sessions.clear()
    _sessions[key] = raw


def held_session(key: str) -> bytes | None:
    """Within `holding()`, before anything was read the usual way: the session as this
    process last read it, held in the request's snapshot along with the version, unconfirmed
    (the request confirms both). None: read it the usual way."""
    request = current_scope()
    raw = _sessions.get(key)
    if raw is None or request is None or not request.may_hold:
        return None
    before = request.snapshot
    if before is not None and (before.confirmed or before.session is not None):
        return None  # read the usual way in this request already (or held once)
    checked()  # the version, unconfirmed too
    found = request.snapshot
    if found is None or found.confirmed:
        return None  # the process holds no version it can confirm
    request.snapshot = dataclasses.replace(found, session=HeldSession(key, raw))
    return raw


def _moved_on(held: Snapshot) -> NoReturn:
    """`held` moved on: the request reads afresh from here on (the next read of the cache
    syncs it to the new version, the session is read from Redis again)."""
    if held.session is not None:
        _sessions.pop(held.session.key, None)
    request = current_scope()
    if request is not None:
        request.snapshot, request.may_hold = None, False
    raise DirectoryChanged(held.version)


def _settle(held: Snapshot, replies: Sequence[Any]) -> None:
    """The request's snapshot confirmed by `replies` (what `held.reads()` read), or
    DirectoryChanged."""
    try:
        confirmed = held.confirmed_by(replies)
    except DirectoryChanged:
        _moved_on(held)
    request = current_scope()
    if request is not None and request.snapshot is held:
        request.snapshot = confirmed


def read_confirmed(held: Snapshot | None, fill: Callable[[Batch], None]) -> list[Any]:
    """The replies of the calls `fill` puts on a Batch, one round trip; when `held` (the
    request's snapshot) is unconfirmed, with what confirms it read first in that same round
    trip (DirectoryChanged: it moved on, and the replies are not returned)."""
    pending = () if held is None else held.reads()
    batch = Batch()
    for key in pending:
        batch.command("GET", key)
    fill(batch)
    replies = batch.execute()
    if held is not None and pending:
        _settle(held, replies[: len(pending)])
    return replies[len(pending) :]


def settle(held: Snapshot | None, *, moved: bool) -> None:
    """A write confirmed `held`'s version in its own call (directory.confirmed_writes): it
    stands (`moved` False), or DirectoryChanged is raised and the next read is fresh."""
    if held is None or held.confirmed:
        return
    if moved:
        _moved_on(held)
    request = current_scope()
    if request is not None and request.snapshot is held:
        request.snapshot = Snapshot(held.version)


def read_afresh() -> None:
    """What follows in this request reads the directory and the session from Redis: what it
    held moved on, or could not be confirmed."""
    request = current_scope()
    if request is None:
        return
    request.may_hold = False
    held = request.snapshot
    if held is not None and not held.confirmed:
        request.snapshot = None


def confirm_pending() -> None:
    """Confirm the request's snapshot, if unconfirmed, with a read of its own."""
    held = snapshot()
    pending = () if held is None else held.reads()
    if held is not None and pending:
        _settle(held, get_redis().mget(pending))
