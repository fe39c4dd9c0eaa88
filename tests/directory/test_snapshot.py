"""directory.snapshot: what a request answers from is a typed value nothing can change in place;
confirming it gives a new one, and one that moved on raises DirectoryChanged."""

from __future__ import annotations

import dataclasses

import pytest

from directory import cache as directory
from directory.keys import version_key
from directory.snapshot import DirectoryChanged, HeldSession, Snapshot


def test_a_snapshot_cannot_be_changed():
    held = Snapshot("v1", confirmed=False, session=HeldSession("s", b"raw"))
    for name, value in [("version", "v2"), ("confirmed", True), ("session", None)]:
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(held, name, value)
    with pytest.raises((AttributeError, TypeError)):
        held.extra = 1  # type: ignore[attr-defined]  # slots: no other attributes
    with pytest.raises(dataclasses.FrozenInstanceError):
        held.session.raw = b"other"  # type: ignore[union-attr,misc]


def test_confirming_gives_a_new_snapshot_or_raises():
    held = Snapshot("v1", confirmed=False, session=HeldSession("s", b"raw"))
    assert held.reads() == (version_key(), "s")
    confirmed = held.confirmed_by([b"v1", b"raw"])
    assert confirmed == Snapshot("v1")
    assert confirmed.reads() == ()
    assert not held.confirmed  # unchanged
    with pytest.raises(DirectoryChanged):
        held.confirmed_by([b"v2", b"raw"])
    with pytest.raises(DirectoryChanged):
        held.confirmed_by([b"v1", b"changed"])


@pytest.mark.django_db
def test_the_cache_hands_out_the_requests_snapshot():
    with directory.request_scope():
        assert directory.snapshot() is None
        _, version = directory.checked()
        found = directory.snapshot()
        assert found == Snapshot(version)
        assert found.confirmed
    assert directory.snapshot() is None  # outside a request: none
