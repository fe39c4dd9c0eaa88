"""ETag / If-None-Match on the list and unread endpoints (SPEC section 9): when nothing changed
for the user, 304 from one Redis round trip, without the serializers.

An answer depends on the warehouse's sequence (every publish and change of status takes a
cursor from it), the next expiry time (the answer changes when it passes), the user's read
version (their own reads), their roles, the query and the format. The ETag is a hash of all of
them. The client's ETags go to the read model's poll script (`etag_of` in
notifications/readmodel/lua/read_model.lua) with the request for the answer
(`Basis.if_none_match`): the script reads the first three, hashes them with the rest as this
module would, and answers "not modified" at once when one of the client's ETags is that hash,
else the answer itself. So a poll costs one round trip whether anything changed or not; a
page that polls after a change (its If-None-Match now stale) pays for no separate check.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from django.http import HttpResponseNotModified
from django.utils.cache import patch_vary_headers
from rest_framework.request import Request
from rest_framework.response import Response

from directory import cache as directory

from ..domain import IfNoneMatch, NotModified, ViewVersion
from .serializers import PollQuery

_HEX = frozenset("0123456789abcdef")


def _hex_of(tag: str) -> str | None:
    """The hash of an ETag of ours (W/"<24 hex digits>"), else None."""
    if len(tag) == 28 and tag.startswith('W/"') and tag.endswith('"'):
        digits = tag[3:-1]
        if _HEX.issuperset(digits):
            return digits
    return None


@dataclass(frozen=True)
class Basis:
    """One request's ETag but for the version: the text it hashes before and after it (the read
    model's `etag_of` joins them the same way: before .. "<sequence>|<next expiry>|<read
    version>" .. after), and the ETags the client sent. Made once per request."""

    before: str
    after: str
    sent: frozenset[str]

    def etag(self, version: ViewVersion) -> str:
        text = (
            f"{self.before}{version.sequence}|{version.next_expiry}|{version.read_version}"
            f"{self.after}"
        )
        return f'W/"{hashlib.sha1(text.encode(), usedforsecurity=False).hexdigest()[:24]}"'

    def if_none_match(self) -> IfNoneMatch | None:
        """The client's ETags for the read model to compare in the answer's own call; None
        when it sent none of ours (the answer is then full)."""
        # As many as the header holds (the server's limit on a header's size bounds them).
        found = sorted(h for h in map(_hex_of, self.sent) if h is not None)
        return IfNoneMatch(self.before, self.after, tuple(found)) if found else None

    def not_modified(self, unchanged: NotModified) -> HttpResponseNotModified:
        """The 304 for what the read model found unchanged (its ETag is the client's tag the
        script matched: the same text hashed the same way)."""
        response = HttpResponseNotModified()
        response["ETag"] = self.etag(unchanged.version)
        patch_vary_headers(response, VARY)
        return response


VARY = ("Accept", "Authorization", "Cookie")


def basis(request: Request, kind: str, query: PollQuery, *, since: int | None = None) -> Basis:
    """The request's Basis, from its query as the view parsed it (serializers.PollQuery);
    `since`: the cursor a list starts after (the look-back when it sent none)."""
    rest = "" if kind == "unread" else f"{since}|{query.limit}|{int(query.include_read)}"
    user: Any = request.user
    roles = ",".join(map(str, sorted(directory.role_ids(user))))
    header = request.META.get("HTTP_IF_NONE_MATCH", "")
    return Basis(
        before="|".join((kind, str(query.warehouse.pk), rest, str(user.pk), roles)) + "|",
        after="|" + (request.accepted_media_type or ""),
        sent=frozenset(tag.strip() for tag in header.split(",") if tag.strip()),
    )


T = TypeVar("T")


def answer_or_not_modified(
    request_basis: Basis, read: Callable[[IfNoneMatch | None], T | NotModified]
) -> T | HttpResponseNotModified:
    """`read` given the client's ETags (one round trip either way): its answer, or the 304
    when one of those ETags is still the answer's."""
    found = read(request_basis.if_none_match())
    return request_basis.not_modified(found) if isinstance(found, NotModified) else found


def tagged(response: Response, request_basis: Basis, version: ViewVersion) -> Response:
    """The full answer, with its ETag."""
    response["ETag"] = request_basis.etag(version)
    patch_vary_headers(response, VARY)
    return response
