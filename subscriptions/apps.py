from django.apps import AppConfig


class SubscriptionsConfig(AppConfig):
    name = "subscriptions"
    verbose_name = "Subscriptions"

    def ready(self) -> None:
        from . import signals  # noqa: F401  (connects the Redis mirror to model changes)
