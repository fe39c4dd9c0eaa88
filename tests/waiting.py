"""Waiting on conditions instead of sleeping for a fixed time."""

import time
from collections.abc import Callable


def eventually(
    condition: Callable[[], object], timeout: float = 15.0, interval: float = 0.05
) -> bool:
    """True as soon as `condition()` is truthy; False if it is still falsy after `timeout` s."""
    deadline = time.monotonic() + timeout
    while True:
        if condition():
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(interval)
