"""What this process knew of each user at their last pending fetch: their chat list, and how
far they had seen each chat. The next fetch reads the list back with every chat's last message
id in one round trip, and runs the scripts (lua/fetch_pending.lua) only of the chats with a
message past what was seen: a fetch with nothing new is one round trip, not two.

Why what is held cannot hide a message: a member's seen id in a chat only grows while they
stay a member (nothing moves it back, and a chat's message ids never go back, even for a
direct chat made again: tests/messaging/test_direct_ids.py), so what is held is at most the
seen id in Redis. A chat whose last message id is not past it has nothing unseen. Joining,
leaving or a chat made again changes the user's chat list (its membership versions), and a
list that differs from the one held is fetched in full. At worst, what is held is behind
(another process fetched): that costs the chat's script, which returns nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

# Users held at once, per process; all are dropped at once when full (a fetch of a user not
# held is the two round trips it always was).
USERS_HELD = 10_000


@dataclass(frozen=True)
class Held:
    entries: tuple[tuple[str, float], ...]  # the chat list as read: (chat id, version)
    seen: Mapping[str, int]  # chat id -> the seen id its script left


_held: dict[int, Held] = {}


def held(user_id: int) -> Held | None:
    return _held.get(user_id)


def hold(user_id: int, entries: tuple[tuple[str, float], ...], seen: Mapping[str, int]) -> None:
    if len(_held) >= USERS_HELD and user_id not in _held:
        _held.clear()
    _held[user_id] = Held(entries, dict(seen))


def held_users() -> int:
    return len(_held)
