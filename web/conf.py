"""The UI's settings, from the environment (config/app_settings.py)."""

from config.app_settings import env

# How often the warehouse page polls the API, and the longest it waits between retries while
# the API is failing (it backs off exponentially from the poll interval up to this).
UI_POLL_INTERVAL_SECONDS = env.float("UI_POLL_INTERVAL_SECONDS", default=10.0)
UI_POLL_MAX_BACKOFF_SECONDS = env.float("UI_POLL_MAX_BACKOFF_SECONDS", default=60.0)
# The warehouse (code) the page opens on for someone who has not picked one yet, when they may
# see it; empty: the first one they receive notifications in. `manage.py demo` sets SH01.
UI_DEFAULT_WAREHOUSE = env("UI_DEFAULT_WAREHOUSE", default="")
# The page uses the stream (and falls back to polling) unless this is off; while the stream is
# live it still polls this often, to pick up what events do not carry (reads in other tabs).
UI_STREAM = env.bool("UI_STREAM", default=True)
UI_STREAM_RECONCILE_SECONDS = env.float("UI_STREAM_RECONCILE_SECONDS", default=60.0)
