"""The inventory demo app's settings, from the environment (config/app_settings.py)."""

from config.app_settings import env

# `manage.py demo` sets this: a pick wave every so often lowers demo bin stock (demo only).
WMS_DEMO_PICK_WAVES = env.bool("WMS_DEMO_PICK_WAVES", default=False)
WMS_DEMO_PICK_WAVE_SECONDS = env.float("WMS_DEMO_PICK_WAVE_SECONDS", default=20.0)
