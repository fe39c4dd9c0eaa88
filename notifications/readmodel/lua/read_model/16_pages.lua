-- --- Pages of a user's view: read in chunks and batches, answered as items ---------------------
-- What `list` (a page) and `unread` (the newest unread) read past the counts: the user's
-- inboxes and the changes zset a chunk at a time, the read state of the slots they may show in
-- one read of each kind per batch, and the items they show with one read of each kind.

-- The user's inboxes KEYS[first..] merged, after `floor` (exclusive), `chunk` slots of each at a
-- time: a pager per inbox (their read-ahead is what `upcoming` looks at).
local function inbox_pagers(first, floor, chunk)
  local boxes = {}
  for i = first, #KEYS do
    boxes[#boxes + 1] = pager(function(after)
      return redis.call('ZRANGEBYSCORE', KEYS[i], after, '+inf', 'LIMIT', 0, chunk)
    end, '(' .. text(floor), chunk)
  end
  return boxes
end

-- The next slot of the merged inboxes (each once however many inboxes hold it), as text and
-- as a number (each inbox's head is read as a number once); nil at the end.
local function next_plain(boxes)
  local best, best_n
  for i = 1, #boxes do
    local box = boxes[i]
    local h = box.buf[box.pos] or head_of(box)
    if h ~= box.h then box.h, box.n = h, h and tonumber(h) end
    if h and (not best_n or box.n < best_n) then best, best_n = h, box.n end
  end
  if not best then return nil end
  for i = 1, #boxes do
    local box = boxes[i]
    if box.h == best then box.pos = box.pos + 1 end
  end
  return best, best_n
end

-- The changes zset after `since` (a cursor as text, exclusive), `chunk` changes at a time.
local function changes_after(since, chunk)
  return {buf = {}, pos = 1, after = '(' .. since, done = false, chunk = chunk}
end

-- The next change: slot, new cursor (text), new cursor (number); nil at the end.
local function next_change(changes)
  if changes.pos > #changes.buf then
    if changes.done then return nil end
    changes.buf = redis.call('ZRANGEBYSCORE', KEYS[K.changes], changes.after, '+inf', 'WITHSCORES',
                             'LIMIT', 0, changes.chunk)
    changes.pos = 1
    changes.done = #changes.buf < 2 * changes.chunk
    if #changes.buf == 0 then return nil end
    changes.after = '(' .. text(tonumber(changes.buf[#changes.buf]))
  end
  local slot, score = changes.buf[changes.pos], tonumber(changes.buf[changes.pos + 1])
  changes.pos = changes.pos + 2
  return slot, text(score), score
end

-- What a page may take next without taking it: the `room` lowest of the inboxes' read-ahead
-- (merged; each inbox's are in order) and the next `room` of the changes' read-ahead.
local function upcoming(boxes, changes, room)
  local found = {}
  if #boxes == 1 then
    -- One inbox: its read-ahead as it is.
    local box = boxes[1]
    for i = box.pos, math.min(#box.buf, box.pos + room - 1) do found[#found + 1] = box.buf[i] end
  else
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
      found[#found + 1] = box.buf[at[low]]
      at[low] = at[low] + 1
      heads[low] = box.buf[at[low]] and tonumber(box.buf[at[low]])
    end
  end
  for i = changes.pos, math.min(#changes.buf, changes.pos + 2 * room - 1), 2 do
    found[#found + 1] = changes.buf[i]
  end
  return found
end

-- The user's read state of `slots` (view: user_view), one read of each kind: their fields
-- (reads, "<user>:<slot>"), their snoozes when they have some, and the slots' expiry when some
-- expired and not all of those were looked at (`all_gone`: unread_counts). Per slot i: own[i],
-- snoozed[i] (false when none), expiries[i] (false when none or not read).
local function batch_state(user, view, slots, all_gone)
  local owns = {}
  for i, slot in ipairs(slots) do owns[i] = user .. ':' .. slot end
  local own = redis.call('HMGET', KEYS[K.reads], unpack(owns))
  local snoozed = view.snoozes and redis.call('ZMSCORE', KEYS[K.snoozes], unpack(owns)) or {}
  local expiries = {}
  if view.expired and not all_gone then
    expiries = redis.call('ZMSCORE', KEYS[K.expiry], unpack(slots))
  end
  return own, snoozed, expiries
end

-- Appends to `reply` the ITEM fields of the items in `items`, given as columns (`slot`,
-- `cursor`, `read`, `changed`, `snoozed`: item i's are slot[i], cursor[i], ...): their contents
-- in one read, the states of the changed ones in one more (an unchanged one has none).
local function append_items(reply, items)
  local slots, changed = items.slot, items.changed
  local n = #slots
  if n == 0 then return reply end
  local with_state = {}
  for i = 1, n do
    if changed[i] then with_state[#with_state + 1] = slots[i] end
  end
  local contents = redis.call('HMGET', KEYS[K.notes], unpack(slots))
  local states_of = {}
  if #with_state > 0 then
    for i, raw in ipairs(redis.call('HMGET', KEYS[K.states], unpack(with_state))) do
      states_of[with_state[i]] = raw
    end
  end
  local cursors, reads, snoozes = items.cursor, items.read, items.snoozed
  local at = #reply
  for i = 1, n do
    reply[at + 1], reply[at + 2], reply[at + 3] = cursors[i], contents[i], reads[i] and 1 or 0
    reply[at + 4], reply[at + 5] = states_of[slots[i]] or false, snoozes[i]
    at = at + ITEM
  end
  return reply
end
