"""The subscriptions app's settings, from the environment (config/app_settings.py)."""

from config.app_settings import env

# How often beat compares the subscriptions' Redis mirror with the database.
SUBSCRIPTION_RECONCILE_SECONDS = env.float("SUBSCRIPTION_RECONCILE_SECONDS", default=30.0)
