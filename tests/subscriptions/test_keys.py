"""Stored keys outlive deploys: these exact strings must not change by accident."""

from subscriptions import keys


def test_subscriber_keys_share_the_warehouse_hash_tag():
    assert keys.warehouse_prefix(7) == "wms:{wh:7}"
    assert keys.subscribers(7, 3) == "wms:{wh:7}:subs:3"
    assert keys.subscribers_token(7, 3) == "wms:{wh:7}:subs:3:token"
    assert keys.subscribers_version(7, 3) == "wms:{wh:7}:subs:3:ver"


def test_the_mark_of_a_rebuild_in_progress():
    assert keys.mirror_rebuilding() == "wms:mirror:rebuilding"
