"""Instant delivery (SPEC section 8): a Server-Sent Events stream of notifications and chat.

It runs as a small pure-ASGI app beside Django's (config/asgi.py routes /api/v1/stream/ to it),
so an open stream holds no thread and no database connection: it authenticates and replays
with short database and Redis calls, then waits in the event loop for what one Redis pub/sub
subscription per process (hub.py) fans out to it.
"""
