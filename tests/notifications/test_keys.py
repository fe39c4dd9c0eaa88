"""Stored keys outlive deploys: these exact strings must not change by accident."""

from notifications import keys


def test_notification_keys_share_the_warehouse_hash_tag():
    assert keys.sequence(4) == "wms:{wh:4}:seq"
    assert keys.inbox(4, "u:9") == "wms:{wh:4}:inbox:u:9"
    assert keys.inbox(4, "r:2") == "wms:{wh:4}:inbox:r:2"
    assert keys.contents(4) == "wms:{wh:4}:notes"
    assert keys.ids(4) == "wms:{wh:4}:ids"
    assert keys.routes(4) == "wms:{wh:4}:routes"
    assert keys.expiry(4) == "wms:{wh:4}:expiry"
    assert keys.reads(4) == "wms:{wh:4}:reads"
    assert keys.users(4) == "wms:{wh:4}:users"
    assert keys.flaps(4) == "wms:{wh:4}:flaps"
    assert keys.claims(4) == "wms:{wh:4}:claims"
    assert keys.report_raised_keys(4, 20_000) == "wms:{wh:4}:report:20000:keys"


def test_an_idempotency_keys_binding_is_in_no_warehouses_slot():
    digest = "86be9a55762d316a3026c2836d044f5f"  # sha256("K"), first 32 hex digits
    assert keys.idempotency(4, "u:9", "K") == f"wms:{{wh:4}}:idem:u:9:{digest}"
    assert keys.idempotency_binding("u:9", "K") == f"wms:{{idem:u:9:{digest}}}"


def test_the_orphan_sweep_reads_owners_back_from_key_names():
    from subscriptions import keys as subscription_keys

    assert keys.every_warehouse_pattern() == "wms:\\{wh:*"
    assert keys.warehouse_pattern(4) == "wms:\\{wh:4\\}:*"
    parse = keys.parse_warehouse_key
    assert parse(keys.inbox(4, "u:9")) == keys.WarehouseKey(4, "user", "9")
    assert parse(keys.inbox(4, "u:9")) == keys.WarehouseKey(4, "user", "9")
    assert parse(keys.inbox(4, "r:2")) == keys.WarehouseKey(4, "role", "2")
    assert parse("wms:{wh:4}:rule:sql:3:sent") == keys.WarehouseKey(4, "rule", "sql:3")
    assert parse(subscription_keys.subscribers(4, 5)) == keys.WarehouseKey(4, "type", "5")
    assert parse(subscription_keys.subscribers_token(4, 5)) == keys.WarehouseKey(4, "type", "5")
    for other in (keys.contents(4), keys.reads(4), keys.sequence(4), "wms:{wh:4}:new:thing"):
        assert parse(other) == keys.WarehouseKey(4, "other")
    for foreign in (
        "wms:chats:activity",
        "wms:{chat:d-1-2}:seq",
        "other:{wh:4}:seq",
        "wms:{wh:x}:a",
    ):
        assert parse(foreign) is None
