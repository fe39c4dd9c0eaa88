"""Who is asking: API tokens, users, their roles and the active warehouses, from a per-process
cache that every change of them invalidates at once (see `cache`)."""
