# ruff: noqa: E501, RUF001  (each row is the docs' key table's row, read best whole)
"""The one registry of Redis key families: what each key is, who owns it, who writes it.

Each app's keys.py still builds its names (small typed functions, pinned by tests); this
registry says which families exist. It drives:
- parsing a key name into its family and owner (`parse`), which the orphan sweeps use to find
  the keys of deleted warehouses, users, roles, message types and rules (notifications.keys);
- the key table in docs/architecture/keys.md, which `python -m config.keyfamilies` prints and
  tests/docs/test_key_table.py compares with the registry (names and types), and its field
  table (each hash's kinds of field, `fields`), which tests/config/test_hash_fields.py compares
  with the registry and with every field the Lua scripts write;
- a test that every key-building function of every app makes a key of exactly one family.

A new family is one entry here and a row in the docs' table; the sweep and the coverage test follow.
Templates are written with the default prefix `wms`; placeholders in angle brackets:
`<id>` a warehouse id, `<user id>`, `<group id>`, `<type id>` (owners the sweep checks),
`<rule id>` (a rule, checked too), `<day>`, `<metric>`, `<type code>`, `<chat id>`, `<task name>`, `<queue>`, `<scope>`
(who made an idempotent request), `<key hash>`.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from functools import cache

from django.conf import settings

# Placeholder -> (regex, owner kind or "" when the sweep does not check it).
_PLACEHOLDERS: dict[str, tuple[str, str]] = {
    "<id>": ("[0-9]{1,19}", ""),
    "<user id>": ("[0-9]{1,19}", "user"),
    "<group id>": ("[0-9]{1,19}", "role"),
    "<type id>": ("[0-9]{1,19}", "type"),
    "<rule id>": ("[^{}]+", "rule"),
    "<day>": ("[0-9]{1,10}", ""),
    "<metric>": ("claim|resolve", ""),
    "<type code>": ("[^{}]+", ""),
    "<chat id>": ("[^{}]+", ""),
    "<task name>": (".+", ""),
    "<queue>": ("[^{}]+", ""),
    "<scope>": ("u:[0-9]{1,19}|python", ""),
    "<key hash>": ("[0-9a-f]{32}", ""),
    "<session key>": ("[a-z0-9]{32}", ""),
}
_PLACEHOLDER = re.compile("|".join(re.escape(p) for p in _PLACEHOLDERS))


@dataclass(frozen=True)
class Field:
    """One kind of field of a hash: its name's `pattern`, literal text with placeholders in
    angle brackets (`v:<user id>`, `<type code>|<event>`, `layout`), and what it holds."""

    pattern: str
    purpose: str


@dataclass(frozen=True)
class KeyFamily:
    template: str  # e.g. "wms:{wh:<id>}:inbox:u:<user id>"
    type: str  # Redis type: string, hash, set, sorted set, list
    holds: str  # what it holds (the docs' words)
    writers: str  # the code that writes it
    # A hash's kinds of field (tests/config/test_hash_fields.py reads the Lua scripts' writes).
    fields: tuple[Field, ...] = ()

    @property
    def warehouse(self) -> bool:
        """A key of one warehouse (hash tag `{wh:<id>}`): removed with its warehouse."""
        return self.template.startswith("wms:{wh:<id>}:")

    @property
    def owner(self) -> str:
        """Whose data it is beyond its warehouse ("user", "role", "type", "rule" or "")."""
        for found in _PLACEHOLDER.findall(self.template):
            if _PLACEHOLDERS[found][1]:
                return _PLACEHOLDERS[found][1]
        return ""

    def regex(self, prefix: str) -> re.Pattern[str]:
        """The full key name, with `prefix` for `wms`; group 1 the warehouse id (warehouse
        keys), the last group the owner (when it has one)."""
        body = self.template[len("wms") :]
        parts, last = [], 0
        for match in _PLACEHOLDER.finditer(body):
            parts.append(re.escape(body[last : match.start()]))
            parts.append(f"({_PLACEHOLDERS[match.group()][0]})")
            last = match.end()
        parts.append(re.escape(body[last:]))
        return re.compile(re.escape(prefix) + "".join(parts), re.DOTALL)


W = "wms:{wh:<id>}"
_RM = "notifications/readmodel/lua/"
_PUBLISH = f"{_RM}publish.lua"
_LIFECYCLE = f"the changes ({_RM}claim, release, release_held, resolve, escalate, reraise)"
_EXPIRE = f"{_RM}expire.lua (removes)"

FAMILIES: tuple[KeyFamily, ...] = (
    # --- the subscription mirror (subscriptions/keys.py) ---
    KeyFamily(
        f"{W}:subs:<type id>",
        "set",
        "subscriber ids `u:<user id>` / `r:<group id>`",
        "subscriptions/store.py",
    ),
    KeyFamily(
        f"{W}:subs:<type id>:token",
        "string",
        '`<member count>:<random hex>`, rewritten with every write of the set, an empty one too: missing means "not mirrored"',
        "subscriptions/store.py",
    ),
    KeyFamily(
        f"{W}:subs:<type id>:ver",
        "string",
        "version counter a writer increments before reading the database; a write lands only while it holds the writer's number",
        "subscriptions/store.py",
    ),
    # --- notifications (notifications/keys.py) ---
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
        f"{W}:rule:<rule id>:alerts",
        "hash",
        "alert key → id of the notification a rule last raised for it (re-raised by a reminder, resolved when the key clears)",
        "rules/store.py",
        fields=(Field("<alert key>", "id of the notification the rule last raised for it"),),
    ),
    KeyFamily(
        f"{W}:rule:<rule id>:sent",
        "hash",
        "de-duplication of one rule in the warehouse: alert key → ms it was sent (negative while a run is publishing it); expires after the cool-down",
        "rules/lua/dedup.lua",
        fields=(Field("<alert key>", "ms it was sent (negative while a run publishes it)"),),
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
    KeyFamily(
        "wms:rules:<rule id>:lock",
        "string",
        "token of the run holding the rule (`SET NX EX`), so overlapping beat ticks skip it",
        "rules/store.py",
    ),
    KeyFamily(
        "wms:rules:last_run",
        "hash",
        "rule id → ms its last run started (Python rules' schedule; SQL rules keep `last_run_at` in the database)",
        "rules/store.py",
        fields=(Field("<rule id>", "ms its last run started"),),
    ),
    # --- chat (messaging/keys.py) ---
    KeyFamily(
        "wms:{chat:<chat id>}:meta",
        "hash",
        "kind, creator, created_ms, last_ms (activity), mver (membership version), last (newest message JSON, for previews)",
        "messaging/lua/*.lua",
        fields=(
            Field("kind", "`direct` or `group`"),
            Field("creator", "who made it"),
            Field("created_ms", "when"),
            Field("last_ms", "its last activity (ms)"),
            Field("mver", "its membership version"),
            Field("last", "its newest message's JSON"),
        ),
    ),
    KeyFamily(
        "wms:{chat:<chat id>}:members",
        "sorted set",
        "member user id → id of the last message they have seen",
        "messaging/lua/*.lua",
    ),
    KeyFamily(
        "wms:{chat:<chat id>}:joined",
        "hash",
        "member user id → last message id when they joined (they see only later ones)",
        "messaging/lua/*.lua",
        fields=(Field("<user id>", "last message id when they joined"),),
    ),
    KeyFamily(
        "wms:{chat:<chat id>}:msgs",
        "sorted set",
        "message JSON scored by message id",
        "messaging/lua/send.lua",
    ),
    KeyFamily(
        "wms:{chat:<chat id>}:seq",
        "string",
        "the last message id given out in the chat; a direct chat's outlives the chat (its pair may open it again and ids never go back) until one of the pair is deleted",
        "messaging/lua/send.lua",
    ),
    KeyFamily(
        "wms:{chat:<chat id>}:idem:u:<user id>:<key hash>",
        "string",
        "Idempotency-Key record of a chat send, for `IDEMPOTENCY_TTL_SECONDS`",
        "messaging/lua/send.lua (with config/lua/idempotency.lua)",
    ),
    KeyFamily(
        "wms:{user:<user id>}:chats",
        "sorted set",
        "chat ids the user belongs to, scored by membership version (an index written before and after joining; the chat's `members` decides)",
        "messaging/store.py",
    ),
    KeyFamily(
        "wms:{user:<user id>}:contacts",
        "list",
        "recent contacts' user ids, most recent first, capped at 100",
        "messaging/store.py",
    ),
    KeyFamily(
        "wms:chats:activity",
        "sorted set",
        "chat id → last activity in ms (the retention sweeps' index)",
        "messaging/lua/*.lua",
    ),
    # --- periodic tasks and the directory cache ---
    KeyFamily(
        "wms:beat:<task name>",
        "string",
        "claim of a periodic task's current tick (`SET NX PX`, 0.9 × its interval), so a second beat cannot run it twice",
        "config/beat.py",
    ),
    KeyFamily(
        "wms:{consumers}:<queue>",
        "string",
        "name of a Celery worker that consumes the queue, written by each such worker every `QUEUE_HEARTBEAT_SECONDS` and expiring after three; `/healthz` names the product's queues without one",
        "config/queues.py",
    ),
    KeyFamily(
        "wms:mirror:rebuilding",
        "string",
        "what some process is rebuilding of the subscription mirror, and since when (expires after 120 s if that process dies); `/healthz` reports it",
        "subscriptions/store.py",
    ),
    KeyFamily(
        "wms:directory:version",
        "string",
        "random token, deleted on every change of a model something held per process is built from (directory/holdings.py: users, groups, memberships, permissions, tokens, warehouses, message types, shifts, alert actions); the next reader puts a new one",
        "directory/cache.py",
    ),
    # --- the delivery objective (delivery/keys.py) ---
    KeyFamily(
        f"{W}:canary:sent",
        "sorted set",
        "canary token → when it was published (ms, Redis's clock); the last hour",
        "delivery/lua/start.lua",
    ),
    KeyFamily(
        f"{W}:canary:arrived",
        "hash",
        "`<token>:stream` / `<token>:poll` → ms from the canary's publish to its arrival on that path",
        "delivery/lua/arrive.lua, delivery/lua/start.lua (removes)",
        fields=(
            Field(
                "<token>:<path>",
                "ms from the canary's publish to its arrival on that path (`stream` or `poll`)",
            ),
        ),
    ),
    KeyFamily(
        "wms:delivery:streams",
        "sorted set",
        "`<host>:<pid>` of each process that serves streams → its last beat (ms); beats older than an hour are dropped",
        "delivery/store.py (from the stream hub)",
    ),
    KeyFamily(
        "wms:delivery:checked",
        "string",
        "the last delivery check as JSON (`at`, the codes of the warehouses `late` and `missing`); `/healthz` reads it",
        "delivery/store.py",
    ),
    KeyFamily(
        "wms:cache:<id>:django.contrib.sessions.cached_db<session key>",
        "string",
        "a browser's session (Django's `cached_db` store, through the cache; `<id>` is the cache's key version, 1): expires with the session, and the `django_session` row is its durable copy",
        "directory/sessions.py (Django)",
    ),
)


@dataclass(frozen=True)
class ParsedKey:
    family: KeyFamily
    warehouse_id: int | None  # warehouse keys only
    owner: str  # the user, role, message type or rule id, "" when the family has no owner


@cache
def _compiled(prefix: str) -> tuple[tuple[KeyFamily, re.Pattern[str]], ...]:
    return tuple((family, family.regex(prefix)) for family in FAMILIES)


def parse(key: str) -> ParsedKey | None:
    """The family of a key name (with this deployment's prefix), None for no known family."""
    for family, pattern in _compiled(settings.WMS_REDIS_PREFIX):
        found = pattern.fullmatch(key)
        if found is None:
            continue
        groups = found.groups()
        warehouse_id = int(groups[0]) if family.warehouse else None
        owner = groups[-1] if family.owner else ""
        return ParsedKey(family, warehouse_id, owner)
    return None


def markdown_table() -> str:
    """The key table of docs/architecture/keys.md."""
    lines = ["| key | type | holds | written by |", "| --- | --- | --- | --- |"]
    for family in FAMILIES:
        template = family.template.replace("|", "\\|")
        lines.append(f"| `{template}` | {family.type} | {family.holds} | {family.writers} |")
    return "\n".join(lines) + "\n"


def markdown_fields() -> str:
    """The field table of docs/architecture/keys.md: each hash's kinds of field."""
    lines = ["| hash | field | holds |", "| --- | --- | --- |"]
    for family in FAMILIES:
        for field in family.fields:
            pattern = field.pattern.replace("|", "\\|")
            purpose = field.purpose.replace("|", "\\|")
            lines.append(f"| `{family.template}` | `{pattern}` | {purpose} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":  # python -m config.keyfamilies: the docs' key and field tables
    sys.stdout.write(markdown_table() + "\n" + markdown_fields())
