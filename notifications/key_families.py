# ruff: noqa: E501  (each row is the docs' key table's row, read best whole)
"""The Redis key families of notifications and their read model, in the one registry (config/keyfamilies.py
finds this module in every installed app). Their names are built in notifications/keys.py."""

from __future__ import annotations

from config.keyfamilies import Field, KeyFamily, W

_RM = "notifications/readmodel/lua/"
_PUBLISH = f"{_RM}publish.lua"
_LIFECYCLE = f"the changes ({_RM}claim, release, release_held, resolve, escalate, reraise)"
_EXPIRE = f"{_RM}expire.lua (removes)"

FAMILIES: tuple[KeyFamily, ...] = (
    KeyFamily(
        f"{W}:seq",
        "string",
        "the last cursor given out in the warehouse",
        f"{_PUBLISH}, {_LIFECYCLE}",
    ),
    KeyFamily(
        f"{W}:inbox:u:<user id>",
        "sorted set",
        "a user's own inbox: member and score are the slot (the cursor it was published with)",
        f"{_PUBLISH}, {_EXPIRE}",
    ),
    KeyFamily(
        f"{W}:inbox:r:<group id>",
        "sorted set",
        "a role's inbox: member and score are the slot",
        f"{_PUBLISH}, {_LIFECYCLE} (escalation), {_EXPIRE}",
    ),
    KeyFamily(
        f"{W}:notes",
        "hash",
        "slot → notification JSON, stored once however many inboxes",
        f"{_PUBLISH}, {_EXPIRE}",
        fields=(Field("<slot>", "the notification's JSON"),),
    ),
    KeyFamily(
        f"{W}:ids",
        "hash",
        "notification id (UUID) → slot",
        f"{_PUBLISH}, {_EXPIRE}",
        fields=(Field("<notification id>", "its slot"),),
    ),
    KeyFamily(
        f"{W}:routes",
        "hash",
        'slot → "uuid subscriber…": what the sweep must undo',
        f"{_PUBLISH}, {_LIFECYCLE} (escalation), {_EXPIRE}",
        fields=(Field("<slot>", "`<notification id> <subscriber> …`: what the sweep undoes"),),
    ),
    KeyFamily(
        f"{W}:expiry", "sorted set", "slot scored by expiry time (ms)", f"{_PUBLISH}, {_EXPIRE}"
    ),
    KeyFamily(
        f"{W}:flags",
        "hash",
        "slot → status letter and severity digit (`o0` open info, `c2` claimed critical, `r1` resolved warning)",
        f"{_PUBLISH}, {_LIFECYCLE}, {_EXPIRE}",
        fields=(Field("<slot>", "status letter and severity digit"),),
    ),
    KeyFamily(
        f"{W}:states",
        "hash",
        "slot → the lifecycle as JSON (status, claimed/resolved by and at, escalated_at, severity, occurrences); absent until the first change",
        f"{_LIFECYCLE}, {_EXPIRE}",
        fields=(Field("<slot>", "the lifecycle as JSON"),),
    ),
    KeyFamily(
        f"{W}:changes",
        "sorted set",
        "slot → the cursor of its latest change of status",
        f"{_LIFECYCLE}, {_EXPIRE}",
    ),
    KeyFamily(
        f"{W}:history",
        "hash",
        "slot → its events after publishing (comma-separated JSON objects)",
        f"{_LIFECYCLE}, {_EXPIRE}",
        fields=(Field("<slot>", "its events after publishing, comma-separated JSON objects"),),
    ),
    KeyFamily(
        f"{W}:escalations",
        "sorted set",
        "slot → ms when it is due for escalation (types that escalate, subscribed or not)",
        f"{_PUBLISH}, {_LIFECYCLE}, {_EXPIRE}",
    ),
    KeyFamily(
        f"{W}:reminders",
        "sorted set",
        "`r<n>:<notification id>` (its reminder number n + 1) and `e:<notification id>` (its e-mail when nobody claims it) → ms when due; Celery beat pops the due ones by score, in batches",
        f"actions/followups.py (schedules), {_RM}remind.lua",
    ),
    KeyFamily(
        f"{W}:claims",
        "sorted set",
        "notification id → ms when its claim expires unless an action ran since (types with `claim_timeout_seconds`); Celery beat pops the due ones by score, in batches",
        f"notifications/claims.py (schedules), {_RM}expire_claims.lua",
    ),
    KeyFamily(
        f"{W}:report:<day>",
        "hash",
        "`<type code>\\|<event>` → count of that UTC day (days since the epoch); expires after `ALERT_REPORT_RETENTION_DAYS`",
        f"{_PUBLISH}, {_LIFECYCLE}",
        fields=(Field("<type code>|<event>", "how many of that event that day"),),
    ),
    KeyFamily(
        f"{W}:report:<day>:<metric>",
        "list",
        '`"<type code> <ms>"`: time to the first claim (`claim`) / to resolve (`resolve`) of alerts of that day (at most `ALERT_REPORT_MAX_SAMPLES_PER_DAY`); same expiry',
        _LIFECYCLE,
    ),
    KeyFamily(
        f"{W}:flaps",
        "hash",
        "`<type code>\\|<alert key>` → `<latest id> <last raise ms> <flapping 0/1> <ms> …`: the latest alert of the key, its last raise, whether it flaps, and its new alerts within `FLAP_WINDOW_SECONDS`; expires a window after its last write",
        _PUBLISH,
        fields=(Field("<type code>|<alert key>", "the key's flapping record"),),
    ),
    KeyFamily(
        f"{W}:report:<day>:noise",
        "hash",
        "the noise report's raises per hour: `<hour>\\|<class>` → raises (publish, re-raise, escalation, a silence's end; not held back) of alerts of that route class in that UTC hour (0-23) of the day, `c\\|<class>` → the class's inboxes; same expiry",
        f"{_PUBLISH}, {_RM}reraise, escalate, unsilence",
        fields=(
            Field("<hour>|<class>", "raises of the class in that hour"),
            Field("c|<class>", "the class's inboxes"),
        ),
    ),
    KeyFamily(
        f"{W}:report:<day>:keys",
        "sorted set",
        "`<type code>\\|<alert key>` → how often an alert with that key was published or raised again that UTC day (the 1000 most raised); same expiry",
        f"{_PUBLISH}, {_RM}reraise",
    ),
    KeyFamily(
        f"{W}:classes",
        "hash",
        'the read model\'s route classes: `<class>` → its inboxes (`"r:2 u:1"`, sorted), `n:<class>` → notifications of it not yet swept, `i:<inbox>` → the classes the inbox is in, `o:<class>` → its open ones not yet swept by severity and its newest open ones (`<info> <warning> <critical> <how many listed> <raise>:<severity digit>:<slot> …`, newest raised first), `m:<class>` → ` <user id> …` who has a watermark of it; `layout` → `counts` once the warehouse was counted (recount.lua)',
        f"{_PUBLISH}, {_LIFECYCLE}, {_EXPIRE}, {_RM}mark_all.lua (holders), recount.lua",
        fields=(
            Field("<class>", "its inboxes, sorted"),
            Field("n:<class>", "its notifications not yet swept"),
            Field("i:<inbox>", "the classes the inbox is in"),
            Field("o:<class>", "its open counts by severity and its newest open ones"),
            Field("m:<class>", "who holds a watermark of it"),
            Field("q", "the log of recent raises, `<raise cursor>:<class> …` (noise budget)"),
            Field(
                "qn",
                "the log's counts per class, `<byte length of q> <its last word> <class>=<n> …`",
            ),
            Field("layout", "`counts` once recount.lua counted the warehouse"),
        ),
    ),
    KeyFamily(
        f"{W}:places",
        "hash",
        "slot → `<class>:<severity digit>:<raise cursor, 16 digits>` (raise: the slot, or its latest re-raise or escalation)",
        f"{_PUBLISH}, {_LIFECYCLE}, {_EXPIRE}",
        fields=(
            Field("<slot>", "its place, `<class>:<severity digit>:<raise cursor>`"),
            Field("q:<slot>", "its noise snapshot: raises per class in the hour before it"),
        ),
    ),
    KeyFamily(
        f"{W}:open",
        "sorted set",
        "`<place>:<slot>` of every open notification not yet swept, all scores 0, in order of class, severity and raise (a class's newest of a severity are read from it by lex range)",
        f"{_PUBLISH}, {_LIFECYCLE}, {_EXPIRE}",
    ),
    KeyFamily(
        f"{W}:users",
        "hash",
        'each user\'s state of the warehouse as a whole: `<user id>` → their "mark all read" watermarks `<class>=<cursor> …`; `v:<user id>` → their read version (ETags); `r:<user id>` → their tallies, ` <class>:<severity digit>=<n> …`: how many open ones of each class and severity are read for them; `s:<user id>` → ` <slot> …` they snoozed; `w:<user id>` → ` <slot> …` they woke since their last mark all; `q:<user id>` → their mute, `<until ms> <severity digit>`: alerts below that severity are not unread for them until then',
        f"{_RM}mark_read.lua, mark_all.lua, snooze.lua, wake.lua, wake_due.lua, claim.lua and every change and expiry (tallies), recount.lua, forget_reader.lua (removes)",
        fields=(
            Field("<user id>", 'their "mark all read" watermarks'),
            Field("v:<user id>", "their read version (ETags)"),
            Field("r:<user id>", "their tallies of open ones read, by class and severity"),
            Field("s:<user id>", "the slots they snoozed"),
            Field("w:<user id>", "the slots they woke since their last mark all"),
            Field("q:<user id>", "their mute, `<until ms> <severity digit>`"),
            Field("o:<user id>", "left by an earlier layout: recount.lua removes it"),
        ),
    ),
    KeyFamily(
        f"{W}:reads",
        "hash",
        "each user's state of one notification: `<user id>:<slot>` → the raise cursor it had when they read it one by one (a later raise outdates it) or `w<cursor>` (woken then); `<slot>` → ` <user id> …` who has such a field or a snooze of it",
        f"{_RM}mark_read.lua, claim.lua, snooze.lua, wake.lua, wake_due.lua, the changes (a raise drops the slot's), {_EXPIRE}",
        fields=(
            Field(
                "<user id>:<slot>", "the raise cursor they read it at, or `w<cursor>` (woken then)"
            ),
            Field("<slot>", "who has such a field or a snooze of it"),
        ),
    ),
    KeyFamily(
        f"{W}:snoozes",
        "sorted set",
        "`<user id>:<slot>` → when that user's snooze of it wakes (ms); Celery beat pops the due ones by score, in batches",
        f"{_RM}snooze.lua, wake.lua, wake_due.lua, claim.lua, the changes (a release or raise wakes them), {_EXPIRE}, forget_reader.lua (removes)",
    ),
    KeyFamily(
        f"{W}:silenced",
        "sorted set",
        "`<silence id>:<slot>`, all scores 0: the alerts a planned silence held back, woken a bounded batch at a time (by lex range) when it ends or is deleted",
        f"{_PUBLISH}, {_RM}reraise.lua, unsilence.lua, {_EXPIRE}",
    ),
    KeyFamily(
        f"{W}:idem:<scope>:<key hash>",
        "string",
        "Idempotency-Key record of a publish, claim, release, resolve or an alert action's press or outcome (`<fingerprint>`, the first answer, the script's reply), for `IDEMPOTENCY_TTL_SECONDS`; scope `u:<user id>` (API) or `python`",
        f"{_PUBLISH}, {_RM}claim.lua, release.lua, resolve.lua, record_event.lua (with config/lua/idempotency.lua)",
    ),
    KeyFamily(
        "wms:{idem:<scope>:<key hash>}",
        "string",
        "the fingerprint of the request an Idempotency-Key was first used for (a publish, claim, release or resolve, in any warehouse), for `IDEMPOTENCY_TTL_SECONDS`: the key reused in another warehouse is 422",
        "config/lua/idempotency.lua (one Redis), config/lua/idempotency_bind.lua (Redis Cluster)",
    ),
)
