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

-- The tally kept beside the log `raw` (its counts `kept`); nil when it is not the log's
-- (missing, or another length or last word: the log was written otherwise, and is counted
-- word by word again). An empty log needs none.
local function noise_kept_tally(raw, kept)
  if raw == '' then return '' end
  if not kept then return nil end
  local size, last, tally = string.match(kept, '^(%d+) (%S+)(.*)$')
  if not size or tonumber(size) ~= #raw then return nil end
  if string.sub(raw, -#last - 1) ~= ' ' .. last then return nil end
  return tally
end

-- `tally` with one raise of `class` (hex digits) fewer: nil when it has none of `class`.
-- A count's digits change in place, so the order stays (a class is followed by '=', which no
-- hex digit is: two entries differ before their counts).
local function noise_tally_drop(tally, class)
  local at = string.find(tally, ' ' .. class .. '=', 1, true)
  if not at then return nil end
  local from = at + #class + 2
  local to = string.find(tally, ' ', from, true)
  local n = tonumber(string.sub(tally, from, (to or 0) - 1)) - 1
  local after = to and string.sub(tally, to) or ''
  if n == 0 then return string.sub(tally, 1, at - 1) .. after end
  return string.sub(tally, 1, from - 1) .. n .. after
end

-- `tally` with a first raise of `class`, in its place.
local function noise_tally_new(tally, class)
  local entry = class .. '=1'
  for at, other in string.gmatch(tally, '() (%S+)') do
    if other > entry then
      return string.sub(tally, 1, at - 1) .. ' ' .. entry .. string.sub(tally, at)
    end
  end
  return tally .. ' ' .. entry
end

-- One raise (of `slot`, its class hex digits) with the log `raw` and the tally kept beside it:
-- only the words leaving the window (at its front) are read, the snapshot is the tally, and a
-- class over NOISE_KEEP loses its oldest, found by a plain find (raises are digits and classes
-- hex, so ":<class> " is only ever that class's word, and the first is the oldest; NOISE_KEEP
-- > 1, so it is not the last word). The same log and snapshot as the word-by-word way (one
-- raise: what that drops at the end, this drops at once); false (nothing written) when the
-- log does not hold what the tally says, and the caller takes that way.
local function noise_raise_counted(slot, class, level, raise, raw, tally)
  local size, at, first = #raw, 2, nil -- the first word left starts at `at`, its colon `first`
  while at <= size do
    first = string.find(raw, ':', at, true)
    local raised = first and tonumber(string.sub(raw, at, first - 1))
    if not raised then return false end
    if raise - raised < NOISE_WINDOW then break end
    local space = string.find(raw, ' ', first, true) or size + 1
    tally = noise_tally_drop(tally, string.sub(raw, first + 1, space - 1))
    if not tally then return false end
    at = space + 1
  end
  local word, entry = text(raise) .. ':' .. class, ' ' .. class .. '='
  local had = string.find(tally, entry, 1, true)
  local digits = had and string.match(tally, '^%d+', had + #entry)
  local n, log = digits and tonumber(digits) or 0, nil
  if n >= NOISE_KEEP then
    local colon = string.find(raw, ':' .. class .. ' ', at, true)
    if not colon then return false end
    if colon == first then -- the first word left (one class raising steadily)
      log = string.sub(raw, colon + #class + 1) .. ' ' .. word
    else
      local start = colon -- its raise's first digit
      while string.byte(raw, start - 1) ~= 32 do start = start - 1 end
      log = string.sub(raw, at - 1, start - 2) .. string.sub(raw, colon + #class + 1)
        .. ' ' .. word
    end
  else
    log = string.sub(raw, at - 1) .. ' ' .. word
  end
  noise_snapshot(slot, level, tally)
  if not had then tally = noise_tally_new(tally, class)
  elseif n < NOISE_KEEP then
    local from = had + #entry
    tally = string.sub(tally, 1, from - 1) .. (n + 1) .. string.sub(tally, from + #digits)
  end
  noise_save(log, word, tally)
  return true
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

-- Records a raise of `slot` (its place already written; `place`: that place, where the caller
-- has it): its snapshot, then itself in the log. From the tally kept beside the log where it
-- is the log's (noise_raise_counted); otherwise word by word.
local function noise_raise(slot, place)
  local class, level, raise
  if place then class, level, raise = place_parts(place)
  else class, level, raise = place_of(slot) end
  if not class then return end
  if string.find(class, '^%x+$') then
    local got = redis.call('HMGET', KEYS[K.classes], 'q', 'qn')
    local raw = got[1] or ''
    local tally = noise_kept_tally(raw, got[2] or nil)
    if tally and noise_raise_counted(slot, class, level, raise, raw, tally) then return end
  end
  noise_raise_all({slot}, {place})
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
