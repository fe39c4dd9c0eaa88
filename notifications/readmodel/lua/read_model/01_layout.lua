-- The read model's prelude (docs/architecture/read-model.md): the only definitions of what is live,
-- visible, read for a user, the cursor of a change and the unread tallies. The loader puts it
-- in front of every read-model script (config/lua_compose.py, "read_model"); no script copies
-- a helper. No writes of its own at load time. It is this folder's files in name order, one
-- concern each, joined into one chunk (a later file uses what an earlier one defines):
--   01_layout        the warehouse's KEYS (K), the clock, severities and flags
--   02_words         word lists kept in hash fields; reading a range a chunk at a time
--   03_notification  what a notification is: live, visible, its place, state and cursors
--   04_read_rule     read for a user: the one rule (marks, own reads, snoozes, wakes)
--   05_tallies_open  counting without scanning: each class's open counts and newest open ones
--   05_tallies_users each user's read counts, moved by a change of a slot
--   05_tallies_writes  one user's change of one slot: marks, snoozes, wakes, forgotten reads
--   06_poll          what a poll reads first (a user's view) and their unread counts
--   07_reply         one notification as a reply (ITEM)
--   08_lifecycle     changes of status (SPEC 7) and the report's counts
--   09_etag          a user's view: the ETag short-cut
--   10_silences_mutes  held back by a planned silence (SPEC 17)
--   11_noise_log     the noise budget's log of raises and each raise's snapshot (SPEC 17)
--   11_noise_raise   one raise from the counts kept beside the log (the common case)
--   11_quiet         what came quietly to whom: a snapshot judged for a user (SPEC 17)
--   12_told_loudly   whom to push, remind or ring for (SPEC 17): the one rule
--   13_flapping      a key that flaps raises its latest alert again (SPEC 17)
--   14_claims        claims that expire (SPEC 17)
--   15_noise_report  the noise report's counts (SPEC 17)
--   16_pages         pages of a user's view: inboxes and changes read in chunks, a batch's
--                    read state, the items shown (list, unread)
--   17_unread_candidates  the newest unread's candidates: class lists merged by raise (unread)
-- KEYS[1..23] a warehouse's keys, at the positions of K below in every script that takes this
--          prelude (notifications/readmodel/layout.py WAREHOUSE builds them in this order);
--          a script's own KEYS start at KEYS[FIRST_OWN].
-- ARGV[1] now, ms since the epoch, in every script that takes this prelude; a script's own
--          ARGV start at ARGV[2].
-- Returns nothing: it defines the layout and local functions for the script that follows it.
--
-- Names used below:
--   slot    the cursor a notification was published with: its identity in every hash
--   place   "<class>:<severity digit>:<raise cursor, 16 digits>" (places, per slot)
--   head    "<class>:<severity digit>" (one range of the open index)
--   marks   a user's "mark all read" watermarks (users, field <user id>): "<class>=<cursor> ..."
--           everything of that class raised up to the cursor is read for the user; "*=<cursor>"
--           (or a plain number) covers every class
--   own     a user's field of one slot (reads, field "<user id>:<slot>"): "<raise cursor>" read
--           one by one while raised at that cursor (a later raise outdates it), or "w<cursor>"
--           woken at that cursor (a "mark all read" before it does not cover it: SPEC 13)

local K = {seq = 1, notes = 2, ids = 3, routes = 4, expiry = 5, flags = 6, states = 7,
           changes = 8, history = 9, escalations = 10, reminders = 11, classes = 12,
           places = 13, open = 14, users = 15, reads = 16, snoozes = 17, report = 18,
           claim_ms = 19, resolve_ms = 20, silenced = 21, noise_hours = 22, raised_keys = 23}
local FIRST_OWN = 24
local NOW = tonumber(ARGV[1])
local SEVERITIES = {'info', 'warning', 'critical'}
local LEVEL = {info = 0, warning = 1, critical = 2}
local LETTER = {open = 'o', claimed = 'c', resolved = 'r'}
-- An open alert a planned silence holds back (SPEC 17) has the flag letter 's': it is not
-- open for the counts (is_open_flag), but its status is "open" (its state says `silenced`).
local SILENCED = 's'

local function flag_of(state)
  local letter = (state.status == 'open' and state.silenced) and SILENCED or LETTER[state.status]
  return letter .. LEVEL[state.severity]
end

-- A user's mute floor (users field "q:<user>", "<until ms> <severity digit>", SPEC 17): alerts
-- below that severity are not unread for them while it lasts; 0 when none is active. Also
-- returns when the active one ends (nil when none).
local function mute_floor(raw)
  if not raw then return 0 end
  local ends, floor = string.match(raw, '^(%d+) (%d)$')
  if not ends or tonumber(ends) <= NOW then return 0 end
  return tonumber(floor), tonumber(ends)
end

local function pad(n) return string.format('%016.0f', n) end
local function text(n) return string.format('%.0f', n) end
