"""ETag / If-None-Match on the list and unread endpoints (SPEC section 9): when nothing changed
for the user, 304 from one Redis round trip, without the serializers.

An answer depends on the warehouse's sequence (every publish and change of status takes a
cursor from it), the next expiry time (the answer changes when it passes), the user's read
version (their own reads), their roles, the query and the format. The ETag is a hash of all of
them; lua/inbox.lua returns the first three with every answer, and `not_modified` reads them
alone (notifications.store.view_version_commands) to compare with the client's.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any, cast

from django.http import HttpResponseNotModified
from django.utils.cache import patch_vary_headers
from rest_framework.request import Request
from rest_framework.response import Response

from config import timestamps
from directory import cache as directory

from .. import selectors, store
from ..domain import ViewVersion
from .serializers import MAX_CURSOR

_FLAGS = {"true": "1", "1": "1", "false": "0", "0": "0"}


def _query(
    kind: str, params: Mapping[str, str], since: int | None = None
) -> tuple[int, str] | None:
    """(warehouse id, the rest of the query as text), or None for a query this shortcut does
    not take (anything unusual): the full path answers those. A list without `since` is
    compared with the look-back it starts from now (`since`: the one the answer used), which
    moves once a minute (selectors.lookback_since)."""
    try:
        warehouse_id = int(params["warehouse"])
        if kind == "unread":
            return warehouse_id, ""
        if "since" in params:
            since = int(params["since"])
        elif since is None:
            since = selectors.lookback_since(timestamps.now_ms())
        limit = int(params.get("limit", "50"))
        include_read = _FLAGS[params.get("include_read", "false").lower()]
    except (KeyError, ValueError):
        return None
    if not (0 < warehouse_id < 2**63 and 0 <= since <= MAX_CURSOR and 1 <= limit <= 200):
        return None
    return warehouse_id, f"{since}|{limit}|{include_read}"


def _etag(kind: str, request: Request, warehouse_id: int, rest: str, version: ViewVersion) -> str:
    user: Any = request.user
    roles = ",".join(map(str, sorted(directory.role_ids(user))))
    text = "|".join(
        (
            kind,
            str(warehouse_id),
            rest,
            str(user.pk),
            roles,
            version.sequence,
            version.next_expiry,
            version.read_version,
            request.accepted_media_type or "",
        )
    )
    return f'W/"{hashlib.sha1(text.encode(), usedforsecurity=False).hexdigest()[:24]}"'


def _sent(request: Request) -> set[str]:
    header = request.headers.get("If-None-Match", "")
    return {tag.strip() for tag in header.split(",") if tag.strip()}


def not_modified(request: Request, kind: str) -> HttpResponseNotModified | None:
    """304 when the client's ETag is still the answer's; None: answer in full."""
    sent = _sent(request)
    query = _query(kind, request.query_params) if sent else None
    if query is None:
        return None
    warehouse_id, rest = query
    if directory.active_warehouse(warehouse_id) is None:
        return None  # the full path says why
    replies = directory.read_confirmed(
        lambda batch: store.view_version_commands(
            batch,
            warehouse_id=warehouse_id,
            user_id=int(cast(Any, request.user).pk),
            now_ms=timestamps.now_ms(),
        )
    )
    version = store.version_from_replies(replies)
    etag = _etag(kind, request, warehouse_id, rest, version)
    if etag not in sent:
        return None
    response = HttpResponseNotModified()
    response["ETag"] = etag
    patch_vary_headers(response, ("Accept", "Authorization", "Cookie"))
    return response


def tagged(
    response: Response,
    request: Request,
    kind: str,
    version: ViewVersion,
    *,
    since: int | None = None,
) -> Response:
    """The full answer, with its ETag when its query is one `not_modified` can compare
    (`since`: the cursor a list without one started from)."""
    query = _query(kind, request.query_params, since)
    if query is not None:
        response["ETag"] = _etag(kind, request, query[0], query[1], version)
        patch_vary_headers(response, ("Accept", "Authorization", "Cookie"))
    return response
