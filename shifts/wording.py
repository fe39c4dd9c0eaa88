"""A handover in words (SPEC 12, 13): the sentences its notification body and the admin say.

The page says the same sentences in its own language from the notification's `data`
(web/static/web/js/handover.js, with the same English texts): the title and body stored with
the notification are made once, in the language of the worker that published it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from django.utils.translation import gettext, ngettext

# The handover's sections, in the order they are told.
SECTIONS = ("open", "claimed_off_shift", "escalated", "snoozed", "resolved")

_SENTENCES: dict[str, Callable[[int], str]] = {
    "open": lambda n: ngettext(
        "%(count)s alert is still open.", "%(count)s alerts are still open.", n
    ),
    "claimed_off_shift": lambda n: ngettext(
        "%(count)s alert was claimed by someone going off shift.",
        "%(count)s alerts were claimed by someone going off shift.",
        n,
    ),
    "escalated": lambda n: ngettext(
        "%(count)s alert was escalated during the shift.",
        "%(count)s alerts were escalated during the shift.",
        n,
    ),
    "snoozed": lambda n: ngettext(
        "%(count)s alert is snoozed past the change.",
        "%(count)s alerts are snoozed past the change.",
        n,
    ),
    "resolved": lambda n: ngettext(
        "%(count)s alert was resolved during the shift.",
        "%(count)s alerts were resolved during the shift.",
        n,
    ),
}


def title(*, shift: str, role: str) -> str:
    return gettext("Shift handover: %(shift)s (%(role)s)") % {"shift": shift, "role": role}


def sentence(section: str, count: int) -> str:
    """How many alerts one section holds, as a sentence in the active language."""
    return _SENTENCES[section](count) % {"count": count}


def sentences(counts: Mapping[str, int]) -> list[str]:
    """One sentence per section the counts know, in SECTIONS order."""
    return [sentence(name, int(counts[name])) for name in SECTIONS if name in counts]


def released(count: int) -> str:
    return ngettext(
        "%(count)s claim was given back to open at the end of the shift.",
        "%(count)s claims were given back to open at the end of the shift.",
        count,
    ) % {"count": count}


def median_time_to_claim(seconds: float) -> str:
    """ "Median time to claim: 2 min." (whole minutes from 90 s, else seconds)."""
    if seconds < 90:
        duration = ngettext("%(count)s second", "%(count)s seconds", round(seconds)) % {
            "count": round(seconds)
        }
    else:
        minutes = round(seconds / 60)
        duration = ngettext("%(count)s minute", "%(count)s minutes", minutes) % {"count": minutes}
    return gettext("Median time to claim: %(duration)s.") % {"duration": duration}
