"""ETag / If-None-Match on the list and unread endpoints (SPEC section 9): when nothing changed
for the user, 304 from one Redis round trip, without the serializers.

An answer depends on the warehouse's sequence (every publish and change of status takes a
cursor from it), the next expiry time (the answer changes when it passes), the user's read
version (their own reads), their roles, the query and the format. The ETag is a hash of all of
them. The client's ETags go to the read model's poll script (`etag_of` in
notifications/readmodel/lua/read_model/) with the request for the answer
(`Basis.if_none_match`): the script reads the first three, hashes them with the rest as this
module would, and answers "not modified" at once when one of the client's ETags is that hash,
else the answer itself. So a poll costs one round trip whether anything changed or not; a
page that polls after a change (its If-None-Match now stale) pays for no separate check.

A poll goes through here once (`answer`): the user's roles are read once, for the ETag and
for the read alike, the If-None-Match header is parsed once, and the answer leaves tagged.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from django.http import HttpResponseNotModified
from django.http.response import HttpResponseBase
from rest_framework.request import Request
from rest_framework.response import Response

from directory import cache as directory

from ..domain import IfNoneMatch, NotModified, ViewVersion
from .serializers import PollQuery

_HEX = frozenset("0123456789abcdef")
VARY = "Accept, Authorization, Cookie"


def _hex_of(tag: str) -> str | None:
    """The hash of an ETag of ours (W/"<24 hex digits>"), else None."""
    if len(tag) == 28 and tag.startswith('W/"') and tag.endswith('"'):
        digits = tag[3:-1]
        if _HEX.issuperset(digits):
            return digits
    return None


def tags_of(header: str) -> tuple[str, ...]:
    """The hashes of our ETags in an If-None-Match header, sorted, each once (as many as the
    header holds: the server's limit on a header's size bounds them)."""
    found = {h for tag in header.split(",") if (h := _hex_of(tag.strip())) is not None}
    return tuple(sorted(found))


@dataclass(frozen=True, slots=True)
class Basis:
    """One request's ETag but for the version: the text it hashes before and after it (the read
    model's `etag_of` joins them the same way: before .. "<sequence>|<next expiry>|<read
    version>" .. after), and the hashes of the client's ETags of ours. Made once per request."""

    before: str
    after: str
    tags: tuple[str, ...] = ()

    def etag(self, version: ViewVersion) -> str:
        text = (
            f"{self.before}{version.sequence}|{version.next_expiry}|{version.read_version}"
            f"{self.after}"
        )
        return f'W/"{hashlib.sha1(text.encode(), usedforsecurity=False).hexdigest()[:24]}"'

    def if_none_match(self) -> IfNoneMatch | None:
        """The client's ETags for the read model to compare in the answer's own call; None
        when it sent none of ours (the answer is then full)."""
        return IfNoneMatch(self.before, self.after, self.tags) if self.tags else None


def basis(
    request: Request, kind: str, query: PollQuery, role_ids: Sequence[int], *, since: int | None
) -> Basis:
    """The request's Basis, from its query as the view parsed it (serializers.PollQuery) and
    the user's roles (sorted, as directory.role_ids gives them); `since`: the cursor a list
    starts after (the look-back when it sent none)."""
    rest = "" if kind == "unread" else f"{since}|{query.limit}|{int(query.include_read)}"
    roles = ",".join(map(str, role_ids))
    user: Any = request.user
    return Basis(
        before=f"{kind}|{query.warehouse_id}|{rest}|{user.pk}|{roles}|",
        after="|" + (request.accepted_media_type or ""),
        tags=tags_of(request.META.get("HTTP_IF_NONE_MATCH", "")),
    )


class Versioned(Protocol):
    """An answer of the read model: it says the version its ETag is made of."""

    @property
    def version(self) -> ViewVersion: ...


T = TypeVar("T", bound=Versioned)


def answer(
    request: Request,
    kind: str,
    query: PollQuery,
    read: Callable[[list[int], IfNoneMatch | None], T | NotModified],
    render: Callable[[T], dict[str, Any]],
    *,
    since: int | None = None,
) -> HttpResponseBase:
    """A poll's response: `read` given the user's roles and the client's ETags (one round trip
    either way), then the 304 when one of those ETags is still the answer's, else `render`ed;
    tagged with the answer's ETag either way."""
    user: Any = request.user
    role_ids = directory.role_ids(user)
    request_basis = basis(request, kind, query, role_ids, since=since)
    found = read(role_ids, request_basis.if_none_match())
    response: HttpResponseBase
    if isinstance(found, NotModified):
        # Its ETag is the client's tag the script matched: the same text hashed the same way.
        response = HttpResponseNotModified()
    else:
        response = Response(render(found))
    response["ETag"] = request_basis.etag(found.version)
    # A response of our own, just made: nothing set Vary before.
    response["Vary"] = VARY
    return response
