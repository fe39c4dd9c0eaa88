"""Bulk writes that are announced like saves.

`QuerySet.update()`, `bulk_create()` and `bulk_update()` send no post_save. A model whose rows
other code holds copies of (directory/holdings.py) uses `AnnouncingManager`, whose bulk writes
send `bulk_written` (sender: the model) once they changed rows.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db import models
from django.dispatch import Signal

# Sent (sender: the model; using: the database alias) after a bulk write changed rows.
bulk_written = Signal()


class AnnouncingQuerySet(models.QuerySet[Any]):
    """A QuerySet whose bulk writes send `bulk_written`, as a save sends post_save."""

    def update(self, **kwargs: Any) -> int:
        count = super().update(**kwargs)
        if count:
            bulk_written.send(sender=self.model, using=self.db)
        return count

    def bulk_create(self, objs: Iterable[Any], *args: Any, **kwargs: Any) -> list[Any]:
        made = super().bulk_create(objs, *args, **kwargs)
        if made:
            bulk_written.send(sender=self.model, using=self.db)
        return made

    def bulk_update(self, objs: Iterable[Any], fields: Any, *args: Any, **kwargs: Any) -> int:
        count = super().bulk_update(objs, fields, *args, **kwargs)
        if count:
            bulk_written.send(sender=self.model, using=self.db)
        return count


AnnouncingManager = models.Manager.from_queryset(AnnouncingQuerySet)
