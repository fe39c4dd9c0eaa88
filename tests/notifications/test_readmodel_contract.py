"""The read model's contracts between Python and Lua: the fixed KEYS layout, and each formula
both sides use (the ETag text, the cursor, the route class), pinned pair by pair."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest
from django.contrib.auth.models import Group

from config import timestamps
from notifications import keys, store
from notifications.api.etags import Basis
from notifications.domain import IfNoneMatch, InboxPage, NotModified
from notifications.readmodel import CURSOR_PER_MS, changes, cursor_at, layout, route_class
from notifications.readmodel import PRELUDE as READ_MODEL_PRELUDE

pytestmark = pytest.mark.django_db

LUA = Path(layout.__file__).resolve().parent / "lua"
# The prelude as scripts get it: its folder's files joined in name order.
PRELUDE_TEXT = READ_MODEL_PRELUDE.text


def test_no_helper_is_defined_in_two_scripts():
    """Each read-model script is composed with the prelude: a helper is defined once, in the
    prelude or in the one script that uses it (two copies drift)."""
    where: dict[str, list[str]] = {}
    for path in sorted([*LUA.glob("*.lua"), *LUA.glob("read_model/*.lua")]):
        for name in re.findall(r"^local function (\w+)", path.read_text(), re.M):
            where.setdefault(name, []).append(path.name)
    assert {name: files for name, files in where.items() if len(files) > 1} == {}


def test_the_prelude_names_the_layouts_positions():
    text = PRELUDE_TEXT
    table = re.search(r"local K = \{(.*?)\}", text, re.S)
    assert table is not None
    positions = {name: int(n) for name, n in re.findall(r"(\w+) = (\d+)", table.group(1))}
    assert positions == {name: i for i, name in enumerate(layout.NAMES, start=1)}
    assert f"local FIRST_OWN = {layout.FIRST_OWN}" in text


def test_every_layout_key_is_in_the_warehouses_slot():
    built = layout.warehouse_keys(7, timestamps.now_ms())
    assert len(built) == layout.FIRST_OWN - 1
    assert all(key.startswith("wms:{wh:7}:") for key in built)


def page(warehouse, user, if_none_match=None) -> InboxPage | NotModified:
    return store.list_inbox(
        warehouse_id=warehouse.pk,
        user_id=user.pk,
        role_ids=list(user.groups.values_list("pk", flat=True)),
        since=0,
        limit=10,
        include_read=False,
        now_ms=timestamps.now_ms(),
        if_none_match=if_none_match,
    )


def test_the_etag_python_makes_is_the_one_lua_matches(warehouse, replenishers, send):
    rita, _ = replenishers
    send(title="one")
    first = page(warehouse, rita)
    assert isinstance(first, InboxPage)
    basis = Basis(before="list|u:1|since=0|", after="|json")
    tag = basis.etag(first.version)[3:-1]

    again = page(warehouse, rita, IfNoneMatch(basis.before, basis.after, (tag,)))
    assert again == NotModified(first.version)
    other = page(warehouse, rita, IfNoneMatch(basis.before, basis.after + "x", (tag,)))
    assert isinstance(other, InboxPage)


def test_a_cursor_is_the_clock_times_cursor_per_ms(warehouse, replenishers, send):
    before = timestamps.now_ms()
    note = send(title="now")
    after = timestamps.now_ms()
    assert CURSOR_PER_MS == 1024
    assert cursor_at(before) <= note.cursor < cursor_at(after + 1)


def class_of_place(redis, warehouse, cursor: int) -> tuple[str, list[str]]:
    place = redis.hget(keys.places(warehouse.pk), str(cursor)).decode()
    route = redis.hget(keys.routes(warehouse.pk), str(cursor)).decode().split()[1:]
    return place.split(":")[0], route


def test_python_and_lua_compute_the_same_route_class(redis, warehouse, replenishers, send):
    """Publishing passes the class Python computed (route_class, cached per subscriber list);
    an escalation computes it in Lua (class_of) for the route with the role's inbox added.
    Both must be the SHA-1 of the sorted inboxes, 12 hex digits: pinned here, so a stored
    class keeps its meaning across deploys."""
    note = send(title="classed")
    published, route = class_of_place(redis, warehouse, note.cursor)
    formula = hashlib.sha1(" ".join(sorted(route)).encode(), usedforsecurity=False).hexdigest()
    assert published == route_class(route) == formula[:12]

    supervisors = Group.objects.create(name="supervisors")
    answer = changes.escalate(
        warehouse_id=warehouse.pk,
        slot=str(note.cursor),
        role_id=supervisors.pk,
        now_ms=timestamps.now_ms(),
    )
    assert answer.changed is False  # not due: the index never held it, so nothing changed
    redis.zadd(keys.escalations(warehouse.pk), {str(note.cursor): 1})
    answer = changes.escalate(
        warehouse_id=warehouse.pk,
        slot=str(note.cursor),
        role_id=supervisors.pk,
        now_ms=timestamps.now_ms(),
    )
    assert answer.changed
    escalated, route = class_of_place(redis, warehouse, note.cursor)
    assert f"r:{supervisors.pk}" in route
    assert escalated == route_class(route) != published
