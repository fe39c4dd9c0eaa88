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
    local mark = watermark_in(marks, class)
    if not lowest or mark < lowest then lowest = mark end
  end
  if lowest > floor then floor = lowest end
end

local boxes = {}
for i = FIRST_OWN, #KEYS do
  boxes[#boxes + 1] = pager(function(after)
    return redis.call('ZRANGEBYSCORE', KEYS[i], after, '+inf', 'LIMIT', 0, chunk)
  end, '(' .. text(floor), chunk)
end
-- The next slot of the merged inboxes (each once however many inboxes hold it); each inbox's
-- head is read as a number once.
local function next_plain()
  local best, best_n
  for _, box in ipairs(boxes) do
    local h = head_of(box)
    if h ~= box.h then box.h, box.n = h, h and tonumber(h) end
    if h and (not best_n or box.n < best_n) then best, best_n = h, box.n end
  end
  if not best then return nil end
  for _, box in ipairs(boxes) do
    if box.h == best then box.pos = box.pos + 1 end
  end
  return best, best_n
end

local changes = {buf = {}, pos = 1, after = '(' .. ARGV[7], done = false}
-- The next change after `since`: slot, new cursor (text), new cursor (number).
local function next_change()
  if changes.pos > #changes.buf then
    if changes.done then return nil end
    changes.buf = redis.call('ZRANGEBYSCORE', KEYS[K.changes], changes.after, '+inf', 'WITHSCORES',
                             'LIMIT', 0, chunk)
    changes.pos = 1
    changes.done = #changes.buf < 2 * chunk
    if #changes.buf == 0 then return nil end
    changes.after = '(' .. text(tonumber(changes.buf[#changes.buf]))
  end
  local slot, score = changes.buf[changes.pos], tonumber(changes.buf[changes.pos + 1])
  changes.pos = changes.pos + 2
  return slot, text(score), score
end

-- What the page needs to know of a slot, read in batches: the slots the page may still take
-- next (the lowest of the inboxes' and the changes' read ahead, as many as it has room for)
-- that are not known yet, one read of each kind per batch (its change and the user's field;
-- its place when a watermark may cover it or it changed; the user's snooze when they have
-- some; its expiry when some expired and are not swept yet).
local known = {}
local emitted, looked = 0, 0
local function look_up(asked)
  local slots = {}
  local function want_one(slot)
    if not known[slot] then
      known[slot] = {}
      slots[#slots + 1] = slot
    end
  end
  want_one(asked)
  local room = math.min(limit - emitted, budget - looked) + 1
  -- The inboxes' lowest read ahead, merged (each inbox's are in order).
  local at, heads = {}, {}
  for b, box in ipairs(boxes) do
    at[b] = box.pos
    heads[b] = box.buf[box.pos] and tonumber(box.buf[box.pos])
  end
  for _ = 1, room do
    local low
    for b in ipairs(boxes) do
      if heads[b] and (not low or heads[b] < heads[low]) then low = b end
    end
    if not low then break end
    local box = boxes[low]
    want_one(box.buf[at[low]])
    at[low] = at[low] + 1
    heads[low] = box.buf[at[low]] and tonumber(box.buf[at[low]])
  end
  for i = changes.pos, math.min(#changes.buf, changes.pos + 2 * room - 1), 2 do want_one(changes.buf[i]) end
  if #slots == 0 then return end
  local owns = {}
  for i, slot in ipairs(slots) do owns[i] = user .. ':' .. slot end
  local changed = redis.call('ZMSCORE', KEYS[K.changes], unpack(slots))
  local placed, places = {}, {}
  for i, slot in ipairs(slots) do
    if changed[i] or tonumber(slot) <= highest_mark then placed[#placed + 1] = slot end
  end
  if #placed > 0 then
    for i, place in ipairs(redis.call('HMGET', KEYS[K.places], unpack(placed))) do
      places[placed[i]] = place
    end
  end
  local own = redis.call('HMGET', KEYS[K.reads], unpack(owns))
  local snoozed = view.snoozes and redis.call('ZMSCORE', KEYS[K.snoozes], unpack(owns)) or {}
  local expiries = (view.expired and not all_gone) and redis.call('ZMSCORE', KEYS[K.expiry], unpack(slots)) or {}
  for i, slot in ipairs(slots) do
    local expired
    if view.expired and all_gone then expired = gone[slot] or false
    elseif view.expired then expired = not expiries[i] or tonumber(expiries[i]) <= NOW
    else expired = false end
    known[slot] = {changed = changed[i] ~= false, place = places[slot] or nil, own = own[i] or nil,
                   snooze = snoozed[i] or false, expired = expired}
  end
end

local function info(slot)
  if not known[slot] then look_up(slot) end
  return known[slot]
end

-- Read for the user, at `raise` (a slot published before the read model has no place: no class;
-- one above every watermark needs none).
local function read_here(facts, raise)
  local class = raise <= highest_mark and facts.place and string.match(facts.place, '^(.-):') or nil
  return read_by(marks, class, raise, facts.own, facts.snooze ~= false)
end

local shown = {}
local next_since = ARGV[7]
local a, a_n = next_plain()
local b, b_cursor, b_n = next_change()
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
    local facts = info(a)
    if not facts.changed and not facts.expired then
      local read = read_here(facts, a_n)
      if include_read or not read then
        shown[#shown + 1] = {a, a, read, facts}
        emitted = emitted + 1
        next_since = a
      end
    end
    a, a_n = next_plain()
  else
    reached = b_cursor
    local facts = info(b)
    -- Visible: its class is one of the user's (one published before the read model: in one of
    -- their inboxes).
    local class, _, raise = nil, nil, tonumber(b)
    if facts.place then class, _, raise = place_parts(facts.place) end
    local visible_here = (class and seen[class]) or (not class and visible(b, FIRST_OWN))
    if visible_here and not facts.expired and (include_read or not facts.snooze) then
      shown[#shown + 1] = {b, b_cursor, read_here(facts, raise), facts}
      emitted = emitted + 1
      next_since = b_cursor
    end
    b, b_cursor, b_n = next_change()
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
local slots, with_state = {}, {}
for i, one in ipairs(shown) do
  slots[i] = one[1]
  if one[4].changed then with_state[#with_state + 1] = one[1] end
end
-- Which came quietly to the user: the page's snapshots in one read.
local quiet, budget = {}, tonumber(ARGV[12] or '0')
if budget > 0 then
  local snapshots = noise_snapshots(slots)
  for i, slot in ipairs(slots) do
    if quiet_for(seen, snapshots[slot], budget) then quiet[#quiet + 1] = i end
  end
end
-- Stopped before the newest change (the page is full, or it ended early to bound its work):
-- the client is not caught up, and asks again from next_since.
append(reply, {next_since, (a or b) and 1 or 0, oldest or '', table.concat(quiet, ' ')})
if #shown == 0 then return reply end
-- The items: contents in one read, states of the changed ones in another.
local contents = redis.call('HMGET', KEYS[K.notes], unpack(slots))
local states_of = {}
if #with_state > 0 then
  for i, raw in ipairs(redis.call('HMGET', KEYS[K.states], unpack(with_state))) do
    states_of[with_state[i]] = raw
  end
end
for i, one in ipairs(shown) do
  append(reply, {one[2], contents[i], one[3] and 1 or 0, states_of[one[1]] or false, one[4].snooze})
end
return reply
