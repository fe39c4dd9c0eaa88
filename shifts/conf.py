"""The shifts app's settings (SPEC 13), from the environment (config/app_settings.py)."""

from config.app_settings import env

# Beat looks for shift ends this often; a shift end up to SHIFT_HANDOVER_LOOKBACK_SECONDS ago
# that has no handover yet gets one (so a beat or worker down for less than that loses none).
SHIFT_HANDOVER_SECONDS = env.float("SHIFT_HANDOVER_SECONDS", default=15.0)
SHIFT_HANDOVER_LOOKBACK_SECONDS = env.int("SHIFT_HANDOVER_LOOKBACK_SECONDS", default=3600)
# A handover reads the role's inbox this many notifications per Redis call, and lists at most
# this many alerts per section (its counts stay exact beyond it).
SHIFT_HANDOVER_BATCH = env.int("SHIFT_HANDOVER_BATCH", default=200)
SHIFT_HANDOVER_MAX_ITEMS = env.int("SHIFT_HANDOVER_MAX_ITEMS", default=50)
