"""Stored keys outlive deploys: these exact strings must not change by accident."""

import pytest
from redis.cluster import key_slot

from messaging import keys


def test_chat_keys_share_the_chat_hash_tag():
    assert keys.chat_prefix("g-0123456789abcdef") == "wms:{chat:g-0123456789abcdef}"
    assert keys.meta("d-3-12") == "wms:{chat:d-3-12}:meta"
    assert keys.members("d-3-12") == "wms:{chat:d-3-12}:members"
    assert keys.joined("d-3-12") == "wms:{chat:d-3-12}:joined"
    assert keys.messages("d-3-12") == "wms:{chat:d-3-12}:msgs"
    assert keys.sequence("d-3-12") == "wms:{chat:d-3-12}:seq"
    assert keys.chat_keys("d-3-12") == [
        "wms:{chat:d-3-12}:meta",
        "wms:{chat:d-3-12}:members",
        "wms:{chat:d-3-12}:joined",
        "wms:{chat:d-3-12}:msgs",
        "wms:{chat:d-3-12}:seq",
    ]
    assert keys.pending_keys("d-3-12") == [
        keys.members("d-3-12"),
        keys.messages("d-3-12"),
        keys.sequence("d-3-12"),
    ]


def test_user_and_global_keys():
    assert keys.user_chats(7) == "wms:{user:7}:chats"
    assert keys.contacts(7) == "wms:{user:7}:contacts"
    assert keys.activity() == "wms:chats:activity"


def test_every_key_of_a_chat_is_in_one_cluster_slot():
    for chat_id in ("g-0123456789abcdef", "d-1-2", "d-40-1000"):
        assert len({key_slot(k.encode()) for k in keys.chat_keys(chat_id)}) == 1
    assert key_slot(keys.user_chats(7).encode()) == key_slot(keys.contacts(7).encode())


def test_direct_chat_id_is_the_same_both_ways():
    assert keys.direct_chat_id(12, 3) == keys.direct_chat_id(3, 12) == "d-3-12"
    with pytest.raises(ValueError, match="two different users"):
        keys.direct_chat_id(5, 5)


@pytest.mark.parametrize(
    "chat_id",
    [
        "",
        "direct",
        "pending",
        "d-2-1",
        "d-1-1",
        "d-0-4",
        "d-01-4",
        "g-123",
        "g-0123456789ABCDEF",
        "g-0123456789abcdef0",
        "x}:foo",
        "d-1-2:msgs",
        "d-1-2 ",
    ],
)
def test_only_ids_this_app_hands_out_reach_key_names(chat_id):
    assert not keys.is_chat_id(chat_id)
    with pytest.raises(ValueError, match="Not a chat id"):
        keys.chat_prefix(chat_id)


def test_the_orphan_sweep_reads_ids_back_from_key_names():
    assert keys.every_chat_pattern() == "wms:\\{chat:*"
    assert keys.every_user_pattern() == "wms:\\{user:*"
    for chat_id in ("g-0123456789abcdef", "d-3-12"):
        assert {keys.chat_id_of(k) for k in keys.chat_keys(chat_id)} == {chat_id}
    assert keys.user_id_of(keys.user_chats(7)) == keys.user_id_of(keys.contacts(7)) == 7
    for foreign in (
        "wms:{chat:d-12-3}:seq",
        "wms:{chat:x}:meta",
        "wms:{wh:4}:seq",
        "x:{user:7}:chats",
    ):
        assert keys.chat_id_of(foreign) is None
        assert keys.user_id_of(foreign) is None
    assert keys.direct_pair("d-3-12") == (3, 12)
    assert keys.direct_pair("g-0123456789abcdef") is None
