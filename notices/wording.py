"""A missed notice in words (SPEC 15): the sentences of its escalation's notification.

The page says the same sentences in its reader's language from the notification's `data`
(`title`, `version`, `missing`, `missing_count`; web/static/web/js/notices.js, with the same
English texts): the title and body stored with the notification are made once, in the
language of the worker that published it (as for a handover, shifts/wording.py).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from django.utils.translation import gettext, ngettext


def escalation_title(*, title: str) -> str:
    """Not read in time: <the notice's title>."""
    return gettext("Not read in time: %(title)s") % {"title": title}


def listed_names(names: Sequence[str], count: int) -> str:
    """Like "carl, dora and 2 more": the names, then how many more of `count` there are."""
    if not names:  # NOTICE_ESCALATION_MAX_NAMES 0: the count alone says it
        return str(count)
    joined = functools.reduce(
        lambda first, then: gettext("%(first)s, %(then)s") % {"first": first, "then": then},
        names,
    )
    more = count - len(names)
    if more <= 0:
        return joined
    return ngettext("%(names)s and %(count)s more", "%(names)s and %(count)s more", more) % {
        "names": joined,
        "count": more,
    }


def escalation_body(*, version: int, names: Sequence[str], count: int) -> str:
    """Who has not read the version by its due time, as one sentence."""
    return ngettext(
        "%(count)s person has not read version %(version)s by its due time: %(names)s.",
        "%(count)s people have not read version %(version)s by its due time: %(names)s.",
        count,
    ) % {"count": count, "version": version, "names": listed_names(names, count)}
