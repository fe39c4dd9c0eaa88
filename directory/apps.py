from django.apps import AppConfig


class DirectoryConfig(AppConfig):
    name = "directory"
    verbose_name = "Directory"

    def ready(self) -> None:
        from . import signals

        signals.connect()
