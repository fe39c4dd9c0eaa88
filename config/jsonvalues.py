"""Plain JSON values only: finite numbers, valid Unicode, a bounded depth.

Python's json module accepts and writes NaN and Infinity (not JSON: browsers and DRF's
renderer refuse them), turns 1e999 into infinity, and recurses once per nesting level (a body
nested 100,000 deep is a RecursionError). Everything that enters the product as JSON, from a
request body, a rule or `publish()`, goes through these checks so what is stored can always be
served again.
"""

from __future__ import annotations

import json
import math
from typing import Any

from django.utils.translation import gettext as _

# Deeper than any real payload (a notification's `data` is a few levels at most), shallow
# enough that no recursive code downstream comes near Python's recursion limit.
JSON_MAX_DEPTH = 32


class JsonValueError(ValueError):
    """A value that is not plain JSON; the message says why, for the client."""


def refuse_constant(name: str) -> Any:
    raise JsonValueError(_("%(name)s is not allowed in JSON.") % {"name": name})


def loads(text: str | bytes, *, max_depth: int = JSON_MAX_DEPTH) -> Any:
    """json.loads that refuses NaN / Infinity, numbers that overflow, and deep nesting."""
    try:
        value = json.loads(text, parse_constant=refuse_constant)
    except RecursionError:
        raise JsonValueError(too_deep(max_depth)) from None
    check(value, max_depth=max_depth)
    return value


def check(value: Any, *, max_depth: int = JSON_MAX_DEPTH, text: bool = False) -> None:
    """Raise JsonValueError unless `value` nests at most `max_depth` containers and holds only
    finite numbers (and, with `text`, only strings that are valid Unicode).

    Iterative, so a value nested far too deep is refused without recursing into it.
    """
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list | tuple):
            if depth >= max_depth:
                raise JsonValueError(too_deep(max_depth))
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
            if text and isinstance(item, dict):
                stack.extend((key, depth) for key in item if isinstance(key, str))
        elif isinstance(item, float):
            if not math.isfinite(item):
                raise JsonValueError(
                    _("Numbers must be finite (not NaN or Infinity); %(value)s is not.")
                    % {"value": item}
                )
        elif text and isinstance(item, str) and not _is_unicode(item):
            raise JsonValueError(_("Text must be valid Unicode (no lone surrogates)."))


def too_deep(max_depth: int) -> str:
    return _("JSON may nest at most %(depth)d levels deep.") % {"depth": max_depth}


def _is_unicode(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
