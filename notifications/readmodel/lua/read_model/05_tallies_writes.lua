-- --- One user's change of one slot, keeping their counts exact: reads, snoozes, wakes -------

-- Runs change() (which changes only `user`'s state of `slot`), keeping their count exact.
local function for_user(user, slot, change)
  local place = redis.call('HGET', KEYS[K.places], slot)
  local counted = place and is_open(slot)
  local class, level, raise, marks, before
  if counted then
    class, level, raise = place_parts(place)
    marks = marks_of(user)
    before = is_read(user, slot, marks, class, raise)
  end
  change()
  add_word(KEYS[K.reads], slot, user)
  if counted then
    local after = is_read(user, slot, marks, class, raise)
    if after ~= before then add_counts({user}, {after and 1 or -1}, class .. ':' .. level) end
  end
end

-- Marked read one by one by `user` (as raised now).
local function mark(user, slot)
  for_user(user, slot, function()
    local _, _, raise = place_of(slot)
    redis.call('HSET', KEYS[K.reads], user .. ':' .. slot, text(raise))
    remove_word(KEYS[K.users], 'w:' .. user, slot)
  end)
  redis.call('HINCRBY', KEYS[K.users], 'v:' .. user, 1)
end

local function snooze(user, slot, wakes)
  for_user(user, slot, function()
    redis.call('ZADD', KEYS[K.snoozes], wakes, user .. ':' .. slot)
    add_word(KEYS[K.users], 's:' .. user, slot)
  end)
  redis.call('HINCRBY', KEYS[K.users], 'v:' .. user, 1)
end

local function drop_snooze(user, slot)
  redis.call('ZREM', KEYS[K.snoozes], user .. ':' .. slot)
  remove_word(KEYS[K.users], 's:' .. user, slot)
end

-- Ends `user`'s snooze of `slot`: unread for them from `cursor` on, whatever watermark they had
-- (SPEC 13), until they read it or mark all read again. `by`: who woke it (cjson.null for
-- time or the system). Without a cursor the slot is being raised again (out of the counts,
-- every user's field about to go): only the snooze goes.
local function wake(user, slot, by, cursor)
  local function woken()
    drop_snooze(user, slot)
    redis.call('HSET', KEYS[K.reads], user .. ':' .. slot, 'w' .. cursor)
    add_word(KEYS[K.users], 'w:' .. user, slot)
  end
  if cursor then for_user(user, slot, woken) else drop_snooze(user, slot) end
  redis.call('HINCRBY', KEYS[K.users], 'v:' .. user, 1)
  record(slot, {event = 'woke', at = NOW, by = by})
end

-- Every snooze of the slot wakes (a re-raise, an escalation, a release).
local function wake_all(slot, cursor)
  for _, user in ipairs(who(slot)) do
    if snooze_of(user, slot) then wake(user, slot, cjson.null, cursor) end
  end
end

-- Every user's field of the slot goes (a raise, or the sweep), with their lists' entries.
-- Returns how many fields went.
local function forget_reads(slot)
  local removed = 0
  for _, user in ipairs(who(slot)) do
    removed = removed + redis.call('HDEL', KEYS[K.reads], user .. ':' .. slot)
    remove_word(KEYS[K.users], 'w:' .. user, slot)
  end
  redis.call('HDEL', KEYS[K.reads], slot)
  return removed
end
