-- One page of a user's view of a warehouse (GET /api/v1/notifications/, the stream's replay).
--
-- The work grows with the page, not with what the user can see (docs/architecture/read-model.md): each
-- inbox is read only after `since` and only as far as the page needs (merged: a notification in
-- two of the user's inboxes comes once), and the changes zset likewise. A changed notification
-- comes again after `since` with its new cursor and state, read or not, except one the user
-- snoozed (out of their default list until it wakes). Expired ones are never shown.
-- Preludes: read_model
-- KEYS[1..20] the warehouse (read_model.lua)   KEYS[21..] the inboxes the user sees: their
--          own, then one per role
-- ARGV[1] now   ARGV[2] user id
-- ARGV[3] most expired but not yet swept notifications looked at to leave them out of counts
-- ARGV[4..6] the client's If-None-Match (notifications/api/etags.py): the ETag's text before
--          the version, after it, and the client's ETags ("" "" "" for none)
-- ARGV[7] since (exclusive cursor)   ARGV[8] limit   ARGV[9] "1" to include read ones
-- ARGV[10] most entries to look at beyond the page (then next_since says how far it got)
-- ARGV[11] "1" to also return `oldest` (what a stream needs to decide it can replay)
-- Returns the view head (read_model.lua view_head), then next_since, has_more (1 when the page
--          stopped before the newest change), oldest (the oldest slot still in the user's
--          inboxes, "" when none or not asked), then ITEM fields per notification; or the
--          view head alone with "not modified".

local user = ARGV[2]
local unchanged, view = check_etag(user, ARGV[4], ARGV[5], ARGV[6])
if unchanged then return unchanged end

local marks = view.marks
local seen, class_list = classes_seen(FIRST_OWN)
local counts = unread_counts(user, view, seen, class_list, open_states(class_list), tonumber(ARGV[3]))
-- Above the highest watermark nothing is read by watermark: no need to look up a class.
local highest_mark = 0
for _, cursor in pairs(marks) do highest_mark = math.max(highest_mark, cursor) end

local function read_here(slot, raise)
  local class = place_of(slot)
  return is_read(user, slot, marks, class, raise)
end

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
-- The next slot of the merged inboxes (each once however many inboxes hold it).
local function next_plain()
  local best, best_n
  for _, box in ipairs(boxes) do
    local h = head_of(box)
    if h then
      local n = tonumber(h)
      if not best_n or n < best_n then best, best_n = h, n end
    end
  end
  if not best then return nil end
  for _, box in ipairs(boxes) do
    if head_of(box) == best then box.pos = box.pos + 1 end
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

local items = {}
local next_since = ARGV[7]
local a, a_n = next_plain()
local b, b_cursor, b_n = next_change()
local emitted, looked, reached = 0, 0, nil
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
    if not redis.call('ZSCORE', KEYS[K.changes], a) and live(a) then
      local read
      if a_n > highest_mark then
        read = is_read(user, a, {}, nil, a_n)
      else
        read = read_here(a, a_n)
      end
      if include_read or not read then
        append(items, item_of(a, a, read, user))
        emitted = emitted + 1
        next_since = a
      end
    end
    a, a_n = next_plain()
  else
    reached = b_cursor
    if visible(b, FIRST_OWN) and live(b) and (include_read or not snooze_of(user, b)) then
      local _, _, raise = place_of(b)
      append(items, item_of(b, b_cursor, read_here(b, raise), user))
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
-- Stopped before the newest change (the page is full, or it ended early to bound its work):
-- the client is not caught up, and asks again from next_since.
append(reply, {next_since, (a or b) and 1 or 0, oldest or ''})
return append(reply, items)
