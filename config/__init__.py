"""Project configuration: settings, URLs, the Celery app and the Redis connection."""

from .celery import app as celery_app

__all__ = ["celery_app"]
