"""Beat's canary and check passes (SPEC 16), registered by delivery/apps.py."""

from __future__ import annotations

from typing import Any

from celery import shared_task

from . import services


@shared_task(ignore_result=True)
def publish_canaries() -> int:
    published = services.publish_canaries()
    if published:
        poll_canaries.delay({str(warehouse): token for warehouse, token in published.items()})
    return len(published)


@shared_task(ignore_result=True)
def poll_canaries(expected: dict[str, str]) -> int:
    """`expected`: each canary's token by warehouse id (JSON keys are strings)."""
    return services.poll_canaries({int(warehouse): token for warehouse, token in expected.items()})


@shared_task(ignore_result=True)
def check_delivery() -> dict[str, Any]:
    return services.check()
