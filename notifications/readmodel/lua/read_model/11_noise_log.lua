-- --- Noise budget: the log of raises and each raise's snapshot ---
-- SPEC 17: for each user and warehouse, a non-critical alert beyond NOISE_BUDGET_PER_HOUR
-- alerts in the past hour (the alerts the user could see, raised less than an hour before it)
-- comes quietly to that user: listed and unread, but no push, sound or reminder.
-- Users see alerts through classes (sets of inboxes), so nothing is counted per user at write
-- time. Instead, each raise (publish, re-raise, escalation) records:
--   classes field "q": the warehouse's recent raises, " <raise cursor>:<class> ..." oldest
--     first, those less than an hour before the newest raise, at most NOISE_KEEP per class;
--   classes field "qn": beside it, its counts per class (noise_save), so that a raise reads
--     only the words leaving the hour instead of counting them all;
--   places field "q:<slot>": its snapshot, " <class>=<n> ...": how many raises each class had
--     in the hour before this raise (at most NOISE_KEEP each; no field when there were none,
--     or when it is critical: a critical alert is never quiet; only an escalation, which is a
--     raise, changes a severity).
-- For a user seeing the classes `seen`, the alert is quiet when those counts of their classes
-- add up to the budget or more: frozen at its raise, so the same answer on every poll, event
-- and push (as long as the user sees the same classes). The budget is at most NOISE_KEEP.
-- Judging a snapshot for a user is 11_quiet's.

local NOISE_KEEP = 100
local NOISE_WINDOW = 3600000 * 1024 -- an hour, in cursor units (read_model/ take_cursor)

-- The words of a log `raw` (" <raise>:<class> ..."): where each begins and its class, how many
-- each class has, and whether `raw` is only such words, one space before each. Per word a plain
-- find of its end and one anchored find of its "<digits>:" (a pattern, a table and a number per
-- word were two fifths of a publish's script time at 100 inboxes; a third find, a third of
-- what was left).
local function noise_log_words(raw)
  local starts, classes, counts = {}, {}, {}
  local size, at, n = #raw, 2, 0
  local regular = string.sub(raw, 1, 1) == ' ' and string.sub(raw, -1) ~= ' '
  if not regular then at = 1 end
  while at <= size do
    local space = string.find(raw, ' ', at, true) or size + 1
    local _, colon = string.find(raw, '^%d+:', at)
    if colon and colon < space - 1 then
      n = n + 1
      starts[n] = at
      local class = string.sub(raw, colon + 1, space - 1)
      classes[n] = class
      counts[class] = (counts[class] or 0) + 1
    else
      regular = false -- not "<digits>:<class>", or an empty word: it goes
    end
    at = space + 1
  end
  return starts, classes, counts, regular, n
end

-- Per class, how many raises `counts` has: " <class>=<n> ..." sorted as a snapshot is (at
-- most NOISE_KEEP each, none of 0; '' when none). Nil when `check` and a class is not hex
-- digits.
local function noise_tally(counts, check)
  local tally = {}
  for of, n in pairs(counts) do
    if n > 0 then
      if check and not string.find(of, '^%x+$') then return nil end
      tally[#tally + 1] = of .. '=' .. math.min(n, NOISE_KEEP)
    end
  end
  if #tally == 0 then return '' end
  table.sort(tally)
  return ' ' .. table.concat(tally, ' ')
end

-- The snapshot of a raise of `slot` at `level`: `tally`, the counts of the hour before it
-- (none when it is critical).
local function noise_snapshot(slot, level, tally)
  if tally ~= '' and level < LEVEL.critical then
    redis.call('HSET', KEYS[K.places], 'q:' .. slot, tally)
  else
    redis.call('HDEL', KEYS[K.places], 'q:' .. slot)
  end
end

-- The log `raw`, whose last word is `last` and whose classes have `tally`, written with its
-- counts beside it (classes field "qn": "<byte length of the log> <its last word><tally>"),
-- or without them when a class is not hex digits (`tally` nil).
local function noise_save(raw, last, tally)
  if tally then
    redis.call('HSET', KEYS[K.classes], 'q', raw, 'qn', #raw .. ' ' .. last .. tally)
  else
    redis.call('HSET', KEYS[K.classes], 'q', raw)
    redis.call('HDEL', KEYS[K.classes], 'qn')
  end
end

-- Records raises of `slots`, in the order they were raised (their places already written;
-- `places`: those places, where the caller has them): each one's snapshot, then itself in the
-- log, read word by word, and read and written once however many (a silence's end wakes a
-- batch): each raise moves the hour's window on and counts, per class, what is left in it; a
-- class over NOISE_KEEP loses its oldest at the end. The log's words are copied in runs as
-- they were: only a word's class is taken out, and its raise only where the window starts.
local function noise_raise_all(slots, places)
  local raises = {}
  for i, slot in ipairs(slots) do
    local class, level, raise
    if places and places[i] then class, level, raise = place_parts(places[i])
    else class, level, raise = place_of(slot) end
    if class then raises[#raises + 1] = {slot = slot, class = class, level = level, raise = raise} end
  end
  if #raises == 0 then return end
  -- The log, oldest first: words 1 .. logged of `raw`, then the raises of `raises` (added).
  local raw = redis.call('HGET', KEYS[K.classes], 'q') or ''
  local starts, classes, counts, regular, logged = noise_log_words(raw)
  if not regular then -- none is written so: its good words, one space before each
    local words = {}
    for i = 1, logged do
      words[i] = string.sub(raw, starts[i], (string.find(raw, ' ', starts[i], true) or 0) - 1)
    end
    raw = logged > 0 and ' ' .. table.concat(words, ' ') or ''
    starts, classes, counts, regular, logged = noise_log_words(raw)
  end
  local added = {}
  local function raised(i)
    if i > logged then return added[i].raise end
    return tonumber(string.sub(raw, starts[i], string.find(raw, ':', starts[i], true) - 1))
  end
  local first = 1
  for _, one in ipairs(raises) do
    while first <= #classes and one.raise - raised(first) >= NOISE_WINDOW do
      counts[classes[first]] = counts[classes[first]] - 1
      first = first + 1
    end
    noise_snapshot(one.slot, one.level, noise_tally(counts))
    local n = #classes + 1
    classes[n], added[n] = one.class, {raise = one.raise, word = text(one.raise) .. ':' .. one.class}
    counts[one.class] = (counts[one.class] or 0) + 1
  end
  -- What is left in the window, each class's newest NOISE_KEEP, oldest first: a class over it
  -- loses its oldest ones. A run of the log's words kept (from `from`) is copied at once.
  local over, kept, from = {}, {}, nil
  for of, n in pairs(counts) do
    if n > NOISE_KEEP then over[of] = n - NOISE_KEEP end
  end
  for i = first, #classes do
    local of = classes[i]
    if over[of] or i > logged then
      if from then
        kept[#kept + 1] = string.sub(raw, from, i > logged and -1 or starts[i] - 2)
        from = nil
      end
      if over[of] then over[of] = over[of] > 1 and over[of] - 1 or nil
      else kept[#kept + 1] = added[i].word end
    elseif not from then
      from = starts[i]
    end
  end
  if from then kept[#kept + 1] = string.sub(raw, from) end
  noise_save(' ' .. table.concat(kept, ' '), added[#classes].word, noise_tally(counts, true))
end

-- A slot's snapshot goes with it (the sweep). When the warehouse's last class went (the classes
-- hash holds only the log, its counts and "layout"), the log keeps only the raises of the past
-- hour (a raise within the hour still counts them); its counts go (the next raise counts it).
local function noise_forget(slot)
  redis.call('HDEL', KEYS[K.places], 'q:' .. slot)
  local fields = redis.call('HLEN', KEYS[K.classes])
  if fields == 0 or fields > 3 then return end
  local got = redis.call('HMGET', KEYS[K.classes], 'q', 'qn', 'layout')
  if not got[1] or fields ~= 1 + (got[2] and 1 or 0) + (got[3] and 1 or 0) then return end
  local kept = {}
  for _, entry in ipairs(words(got[1])) do
    local at = tonumber(string.match(entry, '^(%d+):'))
    if at and NOW * 1024 - at < NOISE_WINDOW then kept[#kept + 1] = entry end
  end
  if #kept == 0 then redis.call('HDEL', KEYS[K.classes], 'q', 'qn')
  else
    redis.call('HSET', KEYS[K.classes], 'q', ' ' .. table.concat(kept, ' '))
    redis.call('HDEL', KEYS[K.classes], 'qn')
  end
end
