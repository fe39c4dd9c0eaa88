"""Stored keys outlive deploys: these exact strings must not change by accident."""

from subscriptions import keys


def test_subscriber_keys_share_the_warehouse_hash_tag():
    assert keys.warehouse_prefix(7) == "wms:{wh:7}"
    assert keys.subscribers(7, 3) == "wms:{wh:7}:subs:3"
    assert keys.subscribers_token(7, 3) == "wms:{wh:7}:subs:3:token"
    assert keys.subscribers_version(7, 3) == "wms:{wh:7}:subs:3:ver"


def test_the_mark_of_a_rebuild_in_progress():
    assert keys.mirror_rebuilding() == "wms:mirror:rebuilding"


def test_a_warehouse_id_with_its_prefix_names_the_same_keys_as_the_id():
    from notifications import keys as notification_keys
    from notifications.readmodel import layout

    carried = keys.WarehouseId.of(7)
    assert carried == 7
    assert keys.warehouse_prefix(carried) == "wms:{wh:7}"
    assert keys.subscribers(carried, 3) == keys.subscribers(7, 3)
    assert notification_keys.report_counts(carried, 5) == "wms:{wh:7}:report:5"
    # The layout names every key with one prefix: the same names as each key's function.
    assert layout.warehouse_keys(7, 0) == tuple(build(7, 0) for _, build in layout.WAREHOUSE)
