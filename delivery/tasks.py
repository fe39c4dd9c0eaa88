"""Beat's canary and check passes (SPEC 16), registered by delivery/apps.py."""

from __future__ import annotations

from typing import Any

from celery import shared_task

from . import services


@shared_task(ignore_result=True)
def publish_canaries() -> int:
    published = services.publish_canaries()
    if published:
        poll_canaries.delay(published)
    return len(published)


@shared_task(ignore_result=True)
def poll_canaries(warehouse_ids: list[int]) -> int:
    return services.poll_canaries(warehouse_ids)


@shared_task(ignore_result=True)
def check_delivery() -> dict[str, Any]:
    return services.check()
