"""Nothing left behind forever: chat data of users deleted from the database, stray keys of
chats that no longer exist, and index entries a failed write left out (SPEC.md section 10).

`user_forget` runs when a user is deleted (a Celery task queued on commit); `sweep_orphans`
is the periodic backstop (Celery beat, `manage.py sweep_orphans`) that finds with SCAN, in
bounded steps, what a lost task, a failed write or a race left behind.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, fields, replace

from django.conf import settings
from django.contrib.auth import get_user_model

from config.orphans import existing_ids

from . import keys, services, store
from .store import ChatState

logger = logging.getLogger(__name__)

# A progress line every this many SCAN pages, so a long sweep shows it is moving.
_PROGRESS_EVERY = 100


@dataclass(frozen=True)
class OrphanReport:
    chats: int = 0  # chats whose keys the sweep looked at
    restored: int = 0  # index entries put back (activity index, members' chat lists)
    memberships: int = 0  # memberships of deleted users ended, through the leave path
    chats_deleted: int = 0  # chats gone because their last member was a deleted user
    keys: int = 0  # stray keys removed
    users: int = 0  # deleted users whose chat list and contacts were removed

    def __add__(self, other: OrphanReport) -> OrphanReport:
        return OrphanReport(*(getattr(self, f.name) + getattr(other, f.name) for f in fields(self)))

    def __str__(self) -> str:
        return (
            f"{self.chats} chats checked, {self.restored} index entries restored, "
            f"{self.memberships} memberships of deleted users ended ({self.chats_deleted} chats "
            f"deleted), {self.users} deleted users' keys and {self.keys} stray chat keys removed"
        )

    @property
    def changed(self) -> bool:
        return any(getattr(self, f.name) for f in fields(self) if f.name != "chats")


def user_forget(user_id: int) -> OrphanReport:
    """For a user deleted from the database: leave every chat in their list (the last member
    out deletes the chat, as leaving always does) and remove their chat list and contacts.

    Chats missing from their list are found by `sweep_orphans`, which checks chat members.
    """
    left = deleted = 0
    gone_direct = []
    for chat_id, _version in store.chat_ids_of(user_id):
        if not keys.is_chat_id(chat_id):
            continue
        outcome = services.member_remove(user_id=user_id, chat_id=chat_id)
        if outcome is None:  # a stale entry: not a member any more
            continue
        left += 1
        if outcome:
            deleted += 1
            if keys.direct_pair(chat_id):
                gone_direct.append(chat_id)
    # A gone direct chat keeps its sequence for the pair's next chat; with one of the pair
    # deleted there will be none.
    removed = store.drop_orphans([(chat_id, True) for chat_id in gone_direct])
    removed += store.forget_user(user_id)
    return OrphanReport(memberships=left, chats_deleted=deleted, keys=removed, users=1)


def sweep_orphans(*, batch: int | None = None) -> OrphanReport:
    """Walk every chat key and every per-user chat key with SCAN (`batch` keys a call):

    - a live chat gets back missing entries in the activity index and its members' lists;
    - members the database no longer has leave it (the last one out deletes it);
    - keys of a chat without meta are removed, except a direct chat's sequence while both of
      its pair exist (their next chat continues its ids);
    - chat lists and contacts of users the database no longer has go, after they left every
      chat in their list.

    Each Redis call is bounded by `batch` (default ORPHAN_SWEEP_BATCH) keys or chats.
    """
    batch = batch or settings.ORPHAN_SWEEP_BATCH
    report = OrphanReport()
    for pages, page in enumerate(store.scan_ids(keys.every_chat_pattern(), batch), start=1):
        report += _sweep_chat_page(page)
        if pages % _PROGRESS_EVERY == 0:
            logger.info("Chat orphan sweep: %d pages of chat keys so far: %s", pages, report)
    for pages, page in enumerate(store.scan_ids(keys.every_user_pattern(), batch), start=1):
        user_ids = {user_id for key in page if (user_id := keys.user_id_of(key)) is not None}
        for user_id in sorted(user_ids - existing_ids(get_user_model(), user_ids)):
            report += user_forget(user_id)
        if pages % _PROGRESS_EVERY == 0:
            logger.info("Chat orphan sweep: %d pages of user keys so far: %s", pages, report)
    return report


def _sweep_chat_page(page: list[str]) -> OrphanReport:
    seen: dict[str, set[str]] = {}
    for key in page:
        chat_id = keys.chat_id_of(key)
        if chat_id is not None:
            seen.setdefault(chat_id, set()).add(key)
    if not seen:
        return OrphanReport()
    states = store.chat_states(sorted(seen))
    people = {m for s in states for m in s.member_ids}
    people.update(u for s in states for u in keys.direct_pair(s.chat_id) or ())
    existing = existing_ids(get_user_model(), people)

    left = deleted = 0
    alive: list[ChatState] = []
    orphans: list[tuple[str, bool]] = []
    for state in states:
        pair = keys.direct_pair(state.chat_id)
        # A direct chat's sequence stays while its pair could open the chat again.
        sequence_dead = pair is None or not set(pair) <= existing
        if state.last_activity_ms is None:
            # Gone. Only its sequence is expected to stay behind; look closer if more is seen.
            if sequence_dead or seen[state.chat_id] != {keys.sequence(state.chat_id)}:
                orphans.append((state.chat_id, sequence_dead))
            continue
        gone_now = False
        for user_id in state.member_ids:
            if user_id in existing:
                continue
            outcome = services.member_remove(user_id=user_id, chat_id=state.chat_id)
            if outcome is not None:
                left += 1
                gone_now = gone_now or outcome
        if gone_now:
            deleted += 1
            orphans.append((state.chat_id, sequence_dead))
        else:
            members = tuple(m for m in state.member_ids if m in existing)
            alive.append(replace(state, member_ids=members))
    return OrphanReport(
        chats=len(states),
        restored=store.restore_index_entries(alive),
        memberships=left,
        chats_deleted=deleted,
        keys=store.drop_orphans(orphans),
    )
