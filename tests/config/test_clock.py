"""One clock for product time: `config.timestamps.now_ms`, the seam tests move (issue 10.4)."""

from __future__ import annotations

import re
import time
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from config import timestamps

ROOT = Path(__file__).resolve().parents[2]
PRODUCT = ["config", "subscriptions", "notifications", "messaging", "inventory", "web", "stream"]
# Durations (time.monotonic, time.perf_counter) are not product time and stay allowed.
OTHER_CLOCKS = re.compile(
    r"\btime\.time(_ns)?\(|\bdatetime\.(now|utcnow|today)\(|\btimezone\.now\(|\bdate\.today\("
    r"|from config\.timestamps import [^\n]*\bnow(_ms)?\b"
)


def test_product_code_reads_time_only_through_the_seam():
    offenders = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for package in PRODUCT
        for path in sorted((ROOT / package).rglob("*.py"))
        if path != ROOT / "config" / "timestamps.py" and "migrations" not in path.parts
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if OTHER_CLOCKS.search(line) and not line.lstrip().startswith("#")
    ]
    assert offenders == []


def test_the_clock_fixture_moves_every_reader(clock):
    clock.stop_at(1_800_000_000_123)
    assert timestamps.now_ms() == 1_800_000_000_123
    assert timestamps.iso(timestamps.now()) == "2027-01-15T08:00:00.123Z"

    clock.days_ago(1)
    real = time.time_ns() // 1_000_000
    assert abs(real - 86_400_000 - timestamps.now_ms()) < 5_000


@given(st.integers(min_value=-(10**12), max_value=253_402_300_799_999))
def test_iso_ms_is_iso_of_the_datetime(ms):
    """iso_ms is remembered and skips strftime (it is in every answer): same text as `iso`."""
    assert timestamps.iso_ms(ms) == timestamps.iso(timestamps.ms_to_datetime(ms))
