-- One page of a user's view of a warehouse (GET /api/v1/notifications/, the stream's replay).
--
-- The work grows with the page, not with what the user can see (docs/architecture/read-model.md): each
-- inbox is read only after `since` and only as far as the page needs (merged: a notification in
-- two of the user's inboxes comes once), and the changes zset likewise. A changed notification
-- comes again after `since` with its new cursor and state, read or not, except one the user
-- snoozed (out of their default list until it wakes). Expired ones are never shown.
-- Preludes: read_model
-- KEYS[1..23] the warehouse (read_model/01_layout.lua)   KEYS[24..] the inboxes the user sees: their
--          own, then one per role
-- ARGV[1] now   ARGV[2] user id
-- ARGV[3] most expired but not yet swept notifications looked at to leave them out of counts
-- ARGV[4..6] the client's If-None-Match (notifications/api/etags.py): the ETag's text before
--          the version, after it, and the client's ETags ("" "" "" for none)
-- ARGV[7] since (exclusive cursor)   ARGV[8] limit   ARGV[9] "1" to include read ones
-- ARGV[10] most entries to look at beyond the page (then next_since says how far it got)
-- ARGV[11] "1" to also return `oldest` (what a stream needs to decide it can replay)
-- ARGV[12] the noise budget per hour (read_model/ "Noise budget"; 0: off)
-- Returns the view head (read_model/ view_head), then next_since, has_more (1 when the page
--          stopped before the newest change), oldest (the oldest slot still in the user's
--          inboxes, "" when none or not asked), quiet (the positions, 1-based among the
--          page's items, of those that came quietly to the user, space-separated), then ITEM fields per notification; or the
--          view head alone with "not modified".

local user = ARGV[2]
local unchanged, view = check_etag(user, ARGV[4], ARGV[5], ARGV[6])
if unchanged then return unchanged end

local marks = view.marks
local seen, class_list = classes_seen(FIRST_OWN)
local counts, gone, all_gone = unread_counts(user, view, seen, class_list, open_states(class_list),
                                             tonumber(ARGV[3]))

-- Above the highest watermark nothing is read by watermark: no need to know a class there.
local highest_mark = 0
for _, cursor in pairs(marks) do highest_mark = math.max(highest_mark, cursor) end

local since, limit, include_read = tonumber(ARGV[7]), tonumber(ARGV[8]), ARGV[9] == '1'
local budget = limit + tonumber(ARGV[10])
local chunk = limit + 1
-- Never changed ones come from the inboxes by slot; unread only: those up to the lowest
-- watermark of the user's classes are read (a re-raised or woken one has changed, so it comes
-- through the changes zset).
local floor = since
if not include_read and #class_list > 0 then
  local lowest
  for _, class in ipairs(class_list) do
    local watermark = watermark_in(marks, class)
    if not lowest or watermark < lowest then lowest = watermark end
  end
  if lowest > floor then floor = lowest end
end

local boxes = inbox_pagers(FIRST_OWN, floor, chunk)
local changes = changes_after(ARGV[7], chunk)

-- What the page needs to know of a slot, read in batches: the slots the page may still take
-- next (`upcoming`, as many as it has room for) that are not known yet, one read of each kind
-- per batch (its change and the user's field; its place when a watermark may cover it or it
-- changed; the user's snooze when they have some; its expiry when some expired and are not
-- swept yet). A known slot's facts are at its number (known[slot]) in the columns below: it
-- changed, its place (nil: not read or none), the user's field (nil: none), their snooze
-- (false: none), expired.
local known, known_n = {}, 0
local f_changed, f_place, f_own, f_snooze, f_expired = {}, {}, {}, {}, {}
local emitted, looked = 0, 0
local function look_up(asked)
  local first = known_n + 1
  local slots = {asked}
  known_n = first
  known[asked] = first
  local room = math.min(limit - emitted, budget - looked) + 1
  for _, slot in ipairs(upcoming(boxes, changes, room)) do
    if not known[slot] then
      known_n = known_n + 1
      known[slot] = known_n
      slots[#slots + 1] = slot
    end
  end
  local changed = redis.call('ZMSCORE', KEYS[K.changes], unpack(slots))
  local placed = {}
  for i, slot in ipairs(slots) do
    if changed[i] or (highest_mark > 0 and tonumber(slot) <= highest_mark) then
      placed[#placed + 1] = i
    end
  end
  if #placed > 0 then
    local fields = {}
    for j, i in ipairs(placed) do fields[j] = slots[i] end
    for j, place in ipairs(redis.call('HMGET', KEYS[K.places], unpack(fields))) do
      f_place[first + placed[j] - 1] = place or nil
    end
  end
  local own, snoozed, expiries = batch_state(user, view, slots, all_gone)
  local some_expired, expiry_read = view.expired, view.expired and not all_gone
  for i, slot in ipairs(slots) do
    local at = first + i - 1
    local expired = false
    if expiry_read then expired = not expiries[i] or tonumber(expiries[i]) <= NOW
    elseif some_expired then expired = gone[slot] or false end
    f_changed[at], f_own[at], f_snooze[at], f_expired[at] = changed[i] ~= false, own[i] or nil,
                                                             snoozed[i] or false, expired
  end
end

local function info(slot)
  local at = known[slot]
  if not at then
    look_up(slot)
    at = known[slot]
  end
  return at
end

-- Read for the user, of the slot known at `at`, at `raise` (a slot published before the read
-- model has no place: no class; one above every watermark needs none).
local function read_here(at, raise)
  local place = f_place[at]
  local class = raise <= highest_mark and place and string.match(place, '^(.-):') or nil
  return read_by(marks, class, raise, f_own[at], f_snooze[at] ~= false)
end

-- The page's items, as columns (append_items).
local shown = {slot = {}, cursor = {}, read = {}, changed = {}, snoozed = {}}
local s_slot, s_cursor, s_read, s_changed, s_snooze =
  shown.slot, shown.cursor, shown.read, shown.changed, shown.snoozed
local next_since = ARGV[7]
local a, a_n = next_plain(boxes)
local b, b_cursor, b_n = next_change(changes)
local reached
while emitted < limit and (a or b) do
  if looked >= budget then
    -- Looked far enough for one call: say how far, so the next call goes on from there.
    next_since = reached
    break
  end
  looked = looked + 1
  if b == nil or (a ~= nil and a_n < b_n) then
    reached = a
    -- Unchanged ones: open, never changed; shown unless expired (or read, when unread only).
    local at = known[a] or info(a)
    if not f_changed[at] and not f_expired[at] then
      local read = read_here(at, a_n)
      if include_read or not read then
        emitted = emitted + 1
        s_slot[emitted], s_cursor[emitted], s_read[emitted] = a, a, read
        s_changed[emitted], s_snooze[emitted] = false, f_snooze[at]
        next_since = a
      end
    end
    a, a_n = next_plain(boxes)
  else
    reached = b_cursor
    local at = known[b] or info(b)
    -- Visible: its class is one of the user's (one published before the read model: in one of
    -- their inboxes).
    local class, _, raise = nil, nil, tonumber(b)
    local place = f_place[at]
    if place then class, _, raise = place_parts(place) end
    local visible_here = (class and seen[class]) or (not class and visible(b, FIRST_OWN))
    if visible_here and not f_expired[at] and (include_read or not f_snooze[at]) then
      emitted = emitted + 1
      s_slot[emitted], s_cursor[emitted], s_read[emitted] = b, b_cursor, read_here(at, raise)
      s_changed[emitted], s_snooze[emitted] = f_changed[at], f_snooze[at]
      next_since = b_cursor
    end
    b, b_cursor, b_n = next_change(changes)
  end
end

local oldest
if ARGV[11] == '1' then
  for i = FIRST_OWN, #KEYS do
    local first = redis.call('ZRANGE', KEYS[i], 0, 0)[1]
    if first and (not oldest or tonumber(first) < tonumber(oldest)) then oldest = first end
  end
end
local reply = view_head('page', counts, view.version)
-- Which came quietly to the user: the page's snapshots in one read.
local quiet = quiet_positions(seen, s_slot, tonumber(ARGV[12] or '0'))
-- Stopped before the newest change (the page is full, or it ended early to bound its work):
-- the client is not caught up, and asks again from next_since.
append(reply, {next_since, (a or b) and 1 or 0, oldest or '', table.concat(quiet, ' ')})
-- The items: contents in one read, states of the changed ones in another.
return append_items(reply, shown)
