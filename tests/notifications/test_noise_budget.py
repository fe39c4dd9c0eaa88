"""The noise budget (SPEC 17): per user and warehouse, a non-critical alert beyond
NOISE_BUDGET_PER_HOUR alerts the user could see in the hour before it comes quietly: listed and
unread with `"quiet": true`, counted in the summary's `quiet`; never a critical one."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group

from notifications import keys, lifecycle, services
from notifications.readmodel import cursor_at, route_class
from subscriptions.models import MessageType, Subscription

pytestmark = pytest.mark.django_db

HOUR_MS = 3_600_000


@pytest.fixture
def floor(warehouse, rep_notice, role, make_user, client_for):
    """rita and ralf see the role's alerts (which live a day)."""
    rep_notice.default_ttl_seconds = 86_400
    rep_notice.save()
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, role=role)
    rita, ralf = make_user("rita", role), make_user("ralf", role)
    return {"rita": client_for(rita), "ralf": client_for(ralf)}, {"rita": rita, "ralf": ralf}


def raise_alerts(warehouse, rep_notice, n, severity="info", start=0) -> list[str]:
    return [
        str(
            services.publish(
                message_type=rep_notice,
                warehouse=warehouse,
                title=f"n{start + i}",
                severity=severity,
            ).id
        )
        for i in range(n)
    ]


def ralf_also_receives(users, warehouse, code: str, ttl_seconds: int) -> MessageType:
    """ralf's own subscription, through a role only he is in, of another type."""
    extra = Group.objects.create(name="night")
    users["ralf"].groups.add(extra)
    other = MessageType.objects.create(
        code=code, name=code.title(), default_ttl_seconds=ttl_seconds
    )
    Subscription.objects.create(message_type=other, warehouse=warehouse, role=extra)
    return other


def listed(client, warehouse) -> dict[str, dict]:
    answer = client.get("/api/v1/notifications/", {"warehouse": warehouse.pk}).json()
    return {n["id"]: n for n in answer["results"]}


def summary(client, warehouse) -> dict:
    return client.get("/api/v1/notifications/unread/", {"warehouse": warehouse.pk}).json()


def test_the_seventh_alert_within_the_hour_comes_quietly(floor, warehouse, rep_notice, clock):
    clients, _ = floor
    clock.stop_at(1_900_000_000_000)
    ids = []
    for i in range(8):
        ids += raise_alerts(warehouse, rep_notice, 1, start=i)
        clock.stop_at(1_900_000_000_000 + (i + 1) * 60_000)
    for name in ("rita", "ralf"):
        items = listed(clients[name], warehouse)
        assert [items[i]["quiet"] for i in ids] == [False] * 6 + [True, True], name
        assert all(not items[i]["read"] for i in ids)  # listed and unread
        answer = summary(clients[name], warehouse)
        assert answer["unread_count"] == 8
        assert answer["quiet"] == 2
        latest = {n["id"]: n["quiet"] for n in answer["latest"]}
        assert latest[ids[7]] is True
        assert latest[ids[5]] is False


def test_a_critical_alert_is_never_quiet(floor, warehouse, rep_notice, clock):
    clients, _ = floor
    clock.stop_at(1_900_000_000_000)
    ids = raise_alerts(warehouse, rep_notice, 6, severity="warning")
    ids += raise_alerts(warehouse, rep_notice, 2, severity="critical", start=6)
    items = listed(clients["rita"], warehouse)
    assert [items[i]["quiet"] for i in ids] == [False] * 8
    assert summary(clients["rita"], warehouse)["quiet"] == 0


def test_what_was_raised_more_than_an_hour_before_does_not_count(
    floor, warehouse, rep_notice, clock
):
    clients, _ = floor
    clock.stop_at(1_900_000_000_000)
    early = raise_alerts(warehouse, rep_notice, 6)
    clock.stop_at(1_900_000_000_000 + HOUR_MS)
    later = raise_alerts(warehouse, rep_notice, 1, start=6)
    items = listed(clients["rita"], warehouse)
    assert items[later[0]]["quiet"] is False
    assert [items[i]["quiet"] for i in early] == [False] * 6


def test_the_answer_stays_the_same_poll_after_poll(floor, warehouse, rep_notice, clock):
    clients, users = floor
    clock.stop_at(1_900_000_000_000)
    ids = raise_alerts(warehouse, rep_notice, 7)
    first = {i: n["quiet"] for i, n in listed(clients["rita"], warehouse).items()}
    assert first[ids[6]] is True
    # Time passes (the hour ends), more come in, the user reads some: the same answer.
    clock.stop_at(1_900_000_000_000 + 3 * HOUR_MS)
    raise_alerts(warehouse, rep_notice, 3, start=7)
    services.mark_read(user=users["rita"], warehouse_id=warehouse.pk, ids=[ids[0]])
    again = listed(clients["rita"], warehouse)
    assert {i: again[i]["quiet"] for i in ids[1:]} == {i: first[i] for i in ids[1:]}
    answer = (
        clients["rita"]
        .get("/api/v1/notifications/", {"warehouse": warehouse.pk, "include_read": "true"})
        .json()
    )
    assert {n["id"]: n["quiet"] for n in answer["results"]}[ids[6]] is True


def test_the_budget_counts_what_each_user_could_see(
    floor, warehouse, rep_notice, make_user, client_for, clock
):
    """ralf's own subscription of another type brings him more alerts in the hour: his
    budget runs out first; rita, who does not see them, still hears hers."""
    clients, users = floor
    other = ralf_also_receives(users, warehouse, "NOISY", ttl_seconds=86_400)
    clock.stop_at(1_900_000_000_000)
    raise_alerts(warehouse, other, 5)
    ids = raise_alerts(warehouse, rep_notice, 2, start=5)
    assert listed(clients["ralf"], warehouse)[ids[1]]["quiet"] is True
    assert listed(clients["rita"], warehouse)[ids[1]]["quiet"] is False


def test_a_budget_of_zero_turns_it_off(floor, warehouse, rep_notice, clock, settings):
    settings.NOISE_BUDGET_PER_HOUR = 0
    clients, _ = floor
    clock.stop_at(1_900_000_000_000)
    ids = raise_alerts(warehouse, rep_notice, 8)
    items = listed(clients["rita"], warehouse)
    assert [items[i]["quiet"] for i in ids] == [False] * 8
    assert summary(clients["rita"], warehouse)["quiet"] == 0


def test_a_re_raise_counts_as_a_raise(floor, warehouse, rep_notice, clock):
    clients, _ = floor
    clock.stop_at(1_900_000_000_000)
    ids = raise_alerts(warehouse, rep_notice, 6)
    clock.stop_at(1_900_000_000_000 + 60_000)
    lifecycle.reraise(warehouse_id=warehouse.pk, notification_id=ids[0])
    assert listed(clients["rita"], warehouse)[ids[0]]["quiet"] is True


def test_the_log_of_raises_keeps_the_hour_and_each_class_s_newest_hundred(
    floor, redis, warehouse, rep_notice, role, clock
):
    """The log a raise rewrites (classes field "q", oldest first): what is older than an hour
    goes, a class keeps its newest NOISE_KEEP (100), a word not "<raise>:<class>" goes, the
    others stay as they were; the raise's snapshot counts each class's raises in the hour."""
    now = 1_900_000_000_000
    ours, other = route_class([f"r:{role.pk}"]), "0123456789ab"
    gone = [f"{cursor_at(now - HOUR_MS - i)}:{ours}" for i in (2, 1)]
    hour = [(cursor_at(now - HOUR_MS + 1_000 * (i + 1)), ours) for i in range(100)]
    hour += [(cursor_at(now - HOUR_MS + 1_000 * i + 500), other) for i in (10, 50, 99)]
    kept = [f"{at}:{of}" for at, of in sorted(hour)]
    redis.hset(
        keys.classes(warehouse.pk), "q", " " + " ".join([*gone, *kept[:5], "x12:y", *kept[5:]])
    )
    clock.stop_at(now)

    result = services.publish(message_type=rep_notice, warehouse=warehouse, title="one more")

    log = redis.hget(keys.classes(warehouse.pk), "q").decode()
    assert log == " " + " ".join([*kept[1:], f"{result.cursor}:{ours}"])
    snapshot = redis.hget(keys.places(warehouse.pk), f"q:{result.cursor}").decode()
    assert snapshot == f" {other}=3 {ours}=100"


@pytest.mark.parametrize(
    "bad",
    ["12:", ":ab", "1a:b", "", "12 :ab", "abc", "7:x y:z", "  ", "3:b:c:"],
)
def test_a_log_word_that_is_not_a_raise_goes_and_the_others_stay(
    floor, redis, warehouse, rep_notice, role, clock, bad
):
    """Each word of the log must be "<digits>:<class>", one space before each: the rewrite
    drops any other (an empty class, no digits, a letter among them, an empty word) and keeps
    the good ones and their counts; a class may hold a colon ("3:b:c:" is a raise of "b:c:")."""
    now = 1_900_000_000_000
    ours = route_class([f"r:{role.pk}"])
    good = [f"{cursor_at(now - 1_000 * i)}:{ours}" for i in (3, 2, 1)]
    redis.hset(keys.classes(warehouse.pk), "q", f" {good[0]} {bad} {good[1]} {good[2]} ")
    clock.stop_at(now)

    result = services.publish(message_type=rep_notice, warehouse=warehouse, title="one more")

    survivors = [word for word in bad.split(" ") if word.split(":", 1)[0].isdigit()]
    survivors = [w for w in survivors if len(w.split(":", 1)) == 2 and w.split(":", 1)[1]]
    log = redis.hget(keys.classes(warehouse.pk), "q").decode()
    assert log == " " + " ".join([good[0], *survivors, *good[1:], f"{result.cursor}:{ours}"])
    snapshot = redis.hget(keys.places(warehouse.pk), f"q:{result.cursor}").decode()
    counted = {f"{ours}": 3}
    for word in survivors:
        of = word.split(":", 1)[1]
        counted[of] = counted.get(of, 0) + 1
    assert snapshot == " " + " ".join(sorted(f"{of}={n}" for of, n in counted.items()))


@pytest.mark.xfail(
    strict=True,
    reason="Known gap: once no stored alert goes to a set of inboxes (all swept), the read "
    "model forgets who sees that set, so its raises stop counting against the budget.",
)
def test_a_raise_counts_after_its_alert_was_swept(
    floor, warehouse, rep_notice, make_user, clock, settings
):
    """ralf's own subscription of another type, whose alerts live a minute: five of them in
    the hour, swept, still count (SPEC 17: whatever happened to the alert since)."""
    clients, users = floor
    brief = ralf_also_receives(users, warehouse, "BRIEF", ttl_seconds=60)
    clock.stop_at(1_900_000_000_000)
    raise_alerts(warehouse, brief, 5)
    clock.stop_at(1_900_000_000_000 + 120_000)
    services.expire_warehouse(warehouse.pk, at_ms=1_900_000_000_000 + 120_000)
    ids = raise_alerts(warehouse, rep_notice, 2, start=5)
    assert listed(clients["ralf"], warehouse)[ids[1]]["quiet"] is True


WINDOW = HOUR_MS * 1024  # an hour in cursor units
KEEP = 100


class LogModel:
    """The log of raises as SPEC 17 wants it, kept simply: every raise in order; a raise's
    snapshot counts each class's raises less than an hour before it (at most KEEP each), and
    the log holds those less than an hour before the newest, each class's newest KEEP."""

    def __init__(self, words: list[tuple[int, str]]) -> None:
        self.words = list(words)

    def raised(self, raise_: int, of: str, critical: bool = False) -> str | None:
        self.words = [(at, c) for at, c in self.words if raise_ - at < WINDOW]
        counts: dict[str, int] = {}
        for _, c in self.words:
            counts[c] = counts.get(c, 0) + 1
        self.words.append((raise_, of))
        for c in counts:
            mine = [w for w in self.words if w[1] == c]
            self.words = [w for w in self.words if w[1] != c or w in mine[-KEEP:]]
        if critical or not counts:
            return None
        return " " + " ".join(sorted(f"{c}={min(n, KEEP)}" for c, n in counts.items()))

    def text(self) -> str:
        return " " + " ".join(f"{at}:{c}" for at, c in self.words)


def log_and_counts(redis, warehouse) -> tuple[str, dict[str, int], tuple[int, str, dict]]:
    """The log (classes field "q"), its words counted per class, and the counts kept beside
    it (field "qn": its byte length, its last word, per class)."""
    log, beside = (v.decode() for v in redis.hmget(keys.classes(warehouse.pk), "q", "qn"))
    counted: dict[str, int] = {}
    for word in log.split(" ")[1:]:
        of = word.split(":", 1)[1]
        counted[of] = counted.get(of, 0) + 1
    size, last, *rest = beside.split(" ")
    return (
        log,
        counted,
        (int(size), last, dict((c, int(n)) for c, n in (r.split("=") for r in rest))),
    )


def test_many_raises_keep_the_log_and_its_counts_as_a_simple_model_does(
    floor, redis, warehouse, rep_notice, role, users_extra, clock
):
    """From a log with two classes interleaved (ours full at 100), 170 raises of two real
    classes, some critical: 120 a quarter of a minute apart (ours stays over 100 and loses its
    oldest, wherever it is), then further apart, once after two hours (the log empties). After
    each, the log, the raise's snapshot and the counts kept beside the log are what the model
    says (oldest first, the hour's window, each class's newest 100)."""
    brief, theirs = users_extra
    now = 1_900_000_000_000
    ours, other = route_class([f"r:{role.pk}"]), "0123456789ab"
    seeded = [(cursor_at(now - HOUR_MS + 20_000 * i), ours) for i in range(1, 101)]
    seeded += [(cursor_at(now - HOUR_MS + 20_000 * i + 7_000), other) for i in range(0, 150, 5)]
    seeded.sort()
    model = LogModel(seeded)
    redis.hset(keys.classes(warehouse.pk), "q", model.text())
    at = now
    for step in range(170):
        at += 15_000 if step < 120 else 2 * HOUR_MS if step == 150 else 100_000
        clock.stop_at(at)
        critical = step % 7 == 3
        kind, of = (brief, theirs) if step % 5 == 2 else (rep_notice, ours)
        result = services.publish(
            message_type=kind,
            warehouse=warehouse,
            title=f"n{step}",
            severity="critical" if critical else "info",
        )
        expected = model.raised(result.cursor, of, critical)
        snapshot = redis.hget(keys.places(warehouse.pk), f"q:{result.cursor}")
        assert (snapshot.decode() if snapshot else None) == expected, step
        log, counted, (size, last, beside) = log_and_counts(redis, warehouse)
        assert log == model.text(), step
        assert (size, last, beside) == (len(log.encode()), log.split(" ")[-1], counted), step


@pytest.fixture
def users_extra(floor, warehouse):
    """ralf's own subscription of another type, and its class."""
    _, users = floor
    brief = ralf_also_receives(users, warehouse, "BRIEF", ttl_seconds=86_400)
    return brief, route_class([f"r:{Group.objects.get(name='night').pk}"])


@pytest.mark.parametrize("stale", ["missing", "longer", "same length, another last word"])
def test_a_raise_whose_kept_counts_are_not_its_log_s_counts_the_log(
    floor, redis, warehouse, rep_notice, role, clock, stale
):
    """The counts beside the log (classes field "qn") are used only while they are the log's
    (its length and last word): a log written otherwise is counted word by word again."""
    now = 1_900_000_000_000
    ours, other = route_class([f"r:{role.pk}"]), "0123456789ab"
    clock.stop_at(now)
    raise_alerts(warehouse, rep_notice, 3)
    log, counted, (_, last, beside) = log_and_counts(redis, warehouse)
    assert beside == counted == {ours: 3}
    words = log.split(" ")[1:]
    if stale == "missing":
        redis.hdel(keys.classes(warehouse.pk), "qn")
        words.insert(1, f"{cursor_at(now - 5)}:{other}")
    elif stale == "longer":
        words.insert(1, f"{cursor_at(now - 5)}:{other}")
    else:
        words[-1] = words[-1].split(":")[0] + ":" + other
    redis.hset(keys.classes(warehouse.pk), "q", " " + " ".join(words))
    model = LogModel([(int(at), of) for at, of in (w.split(":") for w in words)])
    clock.stop_at(now + 1_000)

    result = services.publish(message_type=rep_notice, warehouse=warehouse, title="one more")

    expected = model.raised(result.cursor, ours)
    assert redis.hget(keys.places(warehouse.pk), f"q:{result.cursor}").decode() == expected
    log, counted, (size, last, beside) = log_and_counts(redis, warehouse)
    assert log == model.text()
    assert (size, last, beside) == (len(log), log.split(" ")[-1], counted)


@pytest.mark.parametrize("counted", [False, True])
def test_the_sweep_trims_the_log_when_the_warehouse_s_last_class_goes(
    floor, redis, warehouse, rep_notice, clock, counted
):
    """Once the last alert is swept, the log keeps only the past hour's raises and its counts
    go: also in a warehouse counted by recount.lua (classes field "layout")."""
    now = 1_900_000_000_000
    clock.stop_at(now)
    for title in ("early", "late"):
        services.publish(message_type=rep_notice, warehouse=warehouse, title=title, ttl_seconds=5)
    if counted:
        redis.hset(keys.classes(warehouse.pk), "layout", "counts")
    log = redis.hget(keys.classes(warehouse.pk), "q")

    services.expire_warehouse(warehouse.pk, at_ms=now + 60_000)
    left = {f.decode(): v for f, v in redis.hgetall(keys.classes(warehouse.pk)).items()}
    assert left == {"q": log, **({"layout": b"counts"} if counted else {})}

    clock.stop_at(now + 2 * HOUR_MS)
    services.publish(message_type=rep_notice, warehouse=warehouse, title="then", ttl_seconds=5)
    services.expire_warehouse(warehouse.pk, at_ms=now + 4 * HOUR_MS)
    left = {f.decode(): v for f, v in redis.hgetall(keys.classes(warehouse.pk)).items()}
    assert left == ({"layout": b"counts"} if counted else {})
