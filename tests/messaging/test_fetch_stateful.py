"""Pending fetches against an independent reference model (hypothesis stateful testing).

The model is plain Python: per user and chat, whether they are a member and the list of
message ids they have not been given yet. A message is pending for every member but its
sender, and for its sender too while others' messages wait for them (SPEC: nothing is
skipped); a fetch gives each chat's oldest pending up to the cap and forgets them;
leaving forgets everything, and someone who joins sees only what is sent after.

Fetches come from two "processes": this one, and another whose held state
(messaging.held_fetches) is swapped in for the call, so each process's record of what was seen
falls behind the other's. Random sequences of sends, fetches from either process, leaves and
joins, with a small cap; after every fetch the messages given are compared with the model.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    precondition,
    rule,
)

from messaging import held_fetches, services
from tests.stateful import run_seeded

pytestmark = pytest.mark.django_db(transaction=True)

USERS = ("ann", "ben", "cai")
CHATS = 3
CAP = 2
_runs = itertools.count()
_checked = {"fetches": 0, "given": 0}


class FetchMachine(RuleBasedStateMachine):
    @initialize()
    def world(self) -> None:
        from config.users import User

        run = next(_runs)
        self.users = {name: User.objects.create_user(f"{name}-f{run}") for name in USERS}
        # ann creates every chat and never leaves (a chat everyone left is gone).
        self.chats = [
            services.chat_create_group(
                creator=self.users["ann"],
                member_ids=[self.users[n].pk for n in USERS[1:]],
                message="start",
            ).id
            for _ in range(CHATS)
        ]
        self.members = {chat: set(USERS) for chat in self.chats}
        # The creation message is pending for the others.
        self.pending = {
            (user, chat): [] if user == "ann" else [1] for user in USERS for chat in self.chats
        }
        self.other_process: dict[int, held_fetches.Held] = {}

    @rule(sender=st.sampled_from(USERS), chat=st.integers(0, CHATS - 1), n=st.integers(1, 3))
    def send(self, sender: str, chat: int, n: int) -> None:
        chat_id = self.chats[chat]
        if sender not in self.members[chat_id]:
            return
        for _ in range(n):
            sent = services.message_send(user=self.users[sender], chat_id=chat_id, body="m")
            own = self.pending[(sender, chat_id)]
            if own:  # they had not seen everything: their own message waits with the rest
                own.append(sent.id)
            for other in self.members[chat_id] - {sender}:
                self.pending[(other, chat_id)].append(sent.id)

    @rule(user=st.sampled_from(USERS), elsewhere=st.booleans())
    def fetch(self, user: str, elsewhere: bool) -> None:
        if elsewhere:
            self.other_process, held_fetches._held = held_fetches._held, self.other_process
        try:
            given = {
                p.chat: [m.id for m in p.messages]
                for p in services.messages_fetch_pending(user=self.users[user])
            }
        finally:
            if elsewhere:
                self.other_process, held_fetches._held = held_fetches._held, self.other_process
        expected = {}
        for chat_id in self.chats:
            queue = self.pending[(user, chat_id)]
            if queue:
                expected[chat_id] = queue[:CAP]
                del queue[:CAP]
        assert given == expected
        _checked["fetches"] += 1
        _checked["given"] += sum(map(len, given.values()))

    @precondition(lambda self: any(len(m) > 1 for m in self.members.values()))
    @rule(user=st.sampled_from(USERS[1:]), chat=st.integers(0, CHATS - 1))
    def leave(self, user: str, chat: int) -> None:
        chat_id = self.chats[chat]
        if user not in self.members[chat_id]:
            return
        services.chat_leave(user=self.users[user], chat_id=chat_id)
        self.members[chat_id].discard(user)
        self.pending[(user, chat_id)] = []

    @rule(user=st.sampled_from(USERS[1:]), chat=st.integers(0, CHATS - 1))
    def join(self, user: str, chat: int) -> None:
        chat_id = self.chats[chat]
        if user in self.members[chat_id]:
            return
        services.chat_add_member(
            user=self.users["ann"], chat_id=chat_id, new_member_id=self.users[user].pk
        )
        self.members[chat_id].add(user)
        self.pending[(user, chat_id)] = []


def test_pending_fetches_match_an_independent_reference(settings):
    settings.CHAT_PENDING_MAX_PER_CHAT = CAP
    _checked.update(fetches=0, given=0)
    run_seeded(
        FetchMachine, what="Chat fetch stateful test", env="CHAT_FETCH", examples=20, steps=30
    )
    assert _checked["fetches"] > 0
    assert _checked["given"] > 0
