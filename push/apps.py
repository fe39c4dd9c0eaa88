from django.apps import AppConfig


class PushConfig(AppConfig):
    name = "push"
    verbose_name = "Web Push"

    def ready(self) -> None:
        from . import checks  # noqa: F401  (the configured VAPID key pair is checked at start-up)
