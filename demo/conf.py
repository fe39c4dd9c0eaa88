"""The demo's settings, from the environment (config/app_settings.py)."""

from config.app_settings import env

# The demo's Replenishment role works Day and Night shifts in each warehouse. So that a
# newcomer sees a handover within minutes, `manage.py demo` moves the change of shift to this
# many minutes after it starts (0: the fixed times, 06:00 and 18:00 local).
WMS_DEMO_SHIFT_CHANGE_MINUTES = env.int("WMS_DEMO_SHIFT_CHANGE_MINUTES", default=3)
