"""The Celery app (`celery -A config worker|beat`); tasks and beat schedule come from settings."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

# Every task runs through OncePerTickTask: beat-sent runs claim their tick (config/beat.py).
app = Celery("config", task_cls="config.beat:OncePerTickTask")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
