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
    assert keys.read_marks(4, 9) == "wms:{wh:4}:read:9"
    assert keys.readers(4) == "wms:{wh:4}:readers"
