"""The event stream's settings (SPEC section 8, /api/v1/stream/), from the environment
(config/app_settings.py)."""

from config.app_settings import env

# A stream process's hub records that it serves streams this often (one Redis write).
STREAM_BEAT_SECONDS = env.float("STREAM_BEAT_SECONDS", default=10.0)
# A comment line at least this often keeps proxies and the browser from closing an idle stream.
STREAM_HEARTBEAT_SECONDS = env.float("STREAM_HEARTBEAT_SECONDS", default=15.0)
# Frames waiting for one slow client before its stream is closed (it reconnects and replays).
STREAM_QUEUE_LIMIT = env.int("STREAM_QUEUE_LIMIT", default=1000)
# How often an open stream checks its credentials, the warehouse and the user's roles again.
STREAM_RECHECK_SECONDS = env.float("STREAM_RECHECK_SECONDS", default=60.0)
# A stream ends after this long and the client reconnects (spreads clients over new processes).
STREAM_MAX_SECONDS = env.float("STREAM_MAX_SECONDS", default=3600.0)
# A stream whose client reads nothing is closed once a write has waited this long (its buffers
# full), and its memory freed.
STREAM_WRITE_TIMEOUT_SECONDS = env.float("STREAM_WRITE_TIMEOUT_SECONDS", default=30.0)
# A stream's socket send buffer and the most its server queues before a write waits: what a
# client that reads nothing can leave unread (with its own receive buffer) before the write
# timeout starts to run. Without it the kernel's buffers would absorb megabytes.
STREAM_SEND_BUFFER_BYTES = env.int("STREAM_SEND_BUFFER_BYTES", default=64 * 1024)
# Open streams per user in one web process: opening one more closes that user's oldest there.
STREAM_MAX_PER_USER = env.int("STREAM_MAX_PER_USER", default=8)
# How often each web process looks whether users, tokens, roles or warehouses changed (one Redis
# GET); when they did, every open stream's access is checked again through the directory.
STREAM_ACCESS_CHECK_SECONDS = env.float("STREAM_ACCESS_CHECK_SECONDS", default=1.0)
# Each stream lasts STREAM_MAX_SECONDS less a random share of up to this part of it, so streams
# opened together do not all end together.
STREAM_LIFETIME_JITTER = env.float("STREAM_LIFETIME_JITTER", default=0.2)
# The reconnection delay the stream asks browsers for (SSE `retry:`), in milliseconds.
STREAM_RETRY_MS = env.int("STREAM_RETRY_MS", default=3000)
