-- --- Noise budget ---
-- SPEC 17: for each user and warehouse, a non-critical alert beyond NOISE_BUDGET_PER_HOUR
-- alerts in the past hour (the alerts the user could see, raised less than an hour before it)
-- comes quietly to that user: listed and unread, but no push, sound or reminder.
-- Users see alerts through classes (sets of inboxes), so nothing is counted per user at write
-- time. Instead, each raise (publish, re-raise, escalation) records:
--   classes field "q": the warehouse's recent raises, " <raise cursor>:<class> ..." oldest
--     first, those less than an hour before the newest raise, at most NOISE_KEEP per class;
--   places field "q:<slot>": its snapshot, " <class>=<n> ...": how many raises each class had
--     in the hour before this raise (at most NOISE_KEEP each; no field when there were none,
--     or when it is critical: a critical alert is never quiet; only an escalation, which is a
--     raise, changes a severity).
-- For a user seeing the classes `seen`, the alert is quiet when those counts of their classes
-- add up to the budget or more: frozen at its raise, so the same answer on every poll, event
-- and push (as long as the user sees the same classes). The budget is at most NOISE_KEEP.

local NOISE_KEEP = 100
local NOISE_WINDOW = 3600000 * 1024 -- an hour, in cursor units (read_model/ take_cursor)

-- Records raises of `slots`, in the order they were raised (their places already written):
-- each one's snapshot, then itself in the log. The log is read and written once however many
-- (a silence's end wakes a batch): each raise moves the hour's window on and counts, per class,
-- what is left in it. Every publish comes here, so the log is read with plain finds (a pattern,
-- a table and a number per word were two fifths of a publish's script time at 100 inboxes):
-- only each word's class is taken out, its raise only where the window starts, and a word
-- kept is copied as it was.
local function noise_raise_all(slots, places)
  local raises = {}
  for i, slot in ipairs(slots) do
    local class, level, raise
    if places and places[i] then class, level, raise = place_parts(places[i])
    else class, level, raise = place_of(slot) end
    if class then raises[#raises + 1] = {slot = slot, class = class, level = level, raise = raise} end
  end
  if #raises == 0 then return end
  -- The log, oldest first: its words "<raise>:<class>" (where each starts, its colon, where it
  -- ends in `raw`; a raise of `raises` is its word instead), and how many of it each class
  -- has in the window.
  local raw = redis.call('HGET', KEYS[K.classes], 'q') or ''
  local starts, colons, ends, of_class, added, counts = {}, {}, {}, {}, {}, {}
  local at, size = 1, #raw
  while at <= size do
    local space = string.find(raw, ' ', at, true) or size + 1
    local colon = string.find(raw, ':', at, true)
    -- A word that is not "<digits>:<class>" is left out (none is written so).
    if colon and colon > at and colon < space - 1 and string.find(raw, '%D', at) == colon then
      local n = #of_class + 1
      starts[n], colons[n], ends[n] = at, colon, space - 1
      of_class[n] = string.sub(raw, colon + 1, space - 1)
      counts[of_class[n]] = (counts[of_class[n]] or 0) + 1
    end
    at = space + 1
  end
  local function raised(i)
    if added[i] then return added[i].raise end
    return tonumber(string.sub(raw, starts[i], colons[i] - 1))
  end
  local first = 1
  for _, one in ipairs(raises) do
    while first <= #of_class and one.raise - raised(first) >= NOISE_WINDOW do
      counts[of_class[first]] = counts[of_class[first]] - 1
      first = first + 1
    end
    local snapshot = {}
    if one.level < LEVEL.critical then
      for of, n in pairs(counts) do
        if n > 0 then snapshot[#snapshot + 1] = of .. '=' .. math.min(n, NOISE_KEEP) end
      end
    end
    if #snapshot > 0 then
      table.sort(snapshot)
      redis.call('HSET', KEYS[K.places], 'q:' .. one.slot, ' ' .. table.concat(snapshot, ' '))
    else
      redis.call('HDEL', KEYS[K.places], 'q:' .. one.slot)
    end
    local n = #of_class + 1
    of_class[n], added[n] = one.class, {raise = one.raise, word = text(one.raise) .. ':' .. one.class}
    counts[one.class] = (counts[one.class] or 0) + 1
  end
  -- What is left in the window, each class's newest NOISE_KEEP, oldest first: a class over it
  -- loses its oldest ones.
  local over, kept = {}, {}
  for of, n in pairs(counts) do
    if n > NOISE_KEEP then over[of] = n - NOISE_KEEP end
  end
  for i = first, #of_class do
    local of = of_class[i]
    if over[of] then
      over[of] = over[of] > 1 and over[of] - 1 or nil
    else
      kept[#kept + 1] = added[i] and added[i].word or string.sub(raw, starts[i], ends[i])
    end
  end
  redis.call('HSET', KEYS[K.classes], 'q', ' ' .. table.concat(kept, ' '))
end

-- Records a raise of `slot` (its place already written; `place`: that place, where the caller
-- has it): its snapshot, then itself in the log.
local function noise_raise(slot, place) noise_raise_all({slot}, {place}) end

-- Quiet for a user seeing the classes `seen` (a set): a slot whose snapshot is `snapshot`
-- (places field "q:<slot>", or nil), under `budget` (0: off).
local function quiet_for(seen, snapshot, budget)
  if budget <= 0 or not snapshot then return false end
  local total = 0
  for of, n in string.gmatch(snapshot, '(%S+)=(%d+)') do
    if seen[of] then
      total = total + tonumber(n)
      if total >= budget then return true end
    end
  end
  return false
end

-- The snapshots of `slots` (one read): {slot = snapshot or nil}.
local function noise_snapshots(slots)
  local found = {}
  if #slots == 0 then return found end
  local fields = {}
  for i, slot in ipairs(slots) do fields[i] = 'q:' .. slot end
  for i, raw in ipairs(redis.call('HMGET', KEYS[K.places], unpack(fields))) do
    if raw then found[slots[i]] = raw end
  end
  return found
end

-- A slot's snapshot goes with it (the sweep). When the warehouse's last class went, the log
-- keeps only the raises of the past hour (a raise within the hour still counts them).
local function noise_forget(slot)
  redis.call('HDEL', KEYS[K.places], 'q:' .. slot)
  if redis.call('HLEN', KEYS[K.classes]) ~= 1 then return end
  local kept = {}
  for _, entry in ipairs(words(redis.call('HGET', KEYS[K.classes], 'q'))) do
    local at = tonumber(string.match(entry, '^(%d+):'))
    if at and NOW * 1024 - at < NOISE_WINDOW then kept[#kept + 1] = entry end
  end
  if #kept == 0 then redis.call('HDEL', KEYS[K.classes], 'q')
  else redis.call('HSET', KEYS[K.classes], 'q', ' ' .. table.concat(kept, ' ')) end
end

-- Of `users` (`inboxes[i]` the inboxes users[i] sees, space-separated: "u:7 r:2"), those
-- `slot` came quietly to under `budget` (0: off): {user = true}. Every inbox's classes in one
-- read, the snapshot in another; nothing when it has no snapshot.
local function quiet_users(users, slot, inboxes, budget)
  local quiet = {}
  if budget <= 0 or #users == 0 then return quiet end
  local snapshot = redis.call('HGET', KEYS[K.places], 'q:' .. slot)
  if not snapshot then return quiet end
  local wanted, index, classes = {}, {}, {}
  for i = 1, #users do
    for inbox in string.gmatch(inboxes[i] or '', '%S+') do
      if not index[inbox] then
        wanted[#wanted + 1] = 'i:' .. inbox
        index[inbox] = #wanted
      end
    end
  end
  if #wanted > 0 then
    local found = redis.call('HMGET', KEYS[K.classes], unpack(wanted))
    for inbox, at in pairs(index) do classes[inbox] = found[at] or '' end
  end
  for i, user in ipairs(users) do
    local seen = {}
    for inbox in string.gmatch(inboxes[i] or '', '%S+') do
      for seen_class in string.gmatch(classes[inbox] or '', '%S+') do seen[seen_class] = true end
    end
    if quiet_for(seen, snapshot, budget) then quiet[user] = true end
  end
  return quiet
end
