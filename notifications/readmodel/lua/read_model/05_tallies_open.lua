-- --- Counting without scanning ------------------------------------------------------------------
-- Unread of a user, per severity = open ones of the classes they see - the open ones of those
-- classes they have read. Both are kept at write time, so a poll reads them and counts nothing:
--   per class (classes field "o:<class>"): "<info> <warning> <critical>" open ones not yet
--     swept, how many of its newest open ones are listed, then those, "<raise, 16 digits>:
--     <level>:<slot>" newest raised first: the NEWEST newest, or fewer (never fewer than
--     NEWEST / 2 while the class has more), always every open one raised after the last
--     listed one's raise;
--   per user (users field "r:<user>"): " <class>:<level>=<n> ...": how many open ones of each
--     class and severity are read for them (read_by).
-- Whose count a change of a slot moves: users with a field or snooze of it (its "who" list in
-- reads) and users whose watermark of its class may cover it (classes field "m:<class>": who
-- has a watermark of the class); for anyone else an open one is unread.

local NEWEST = 24

-- A class's state: {counts = {info, warning, critical}, listed = how many newest are listed,
-- rest = the listed entries, space-separated}. The field is "<info> <warning> <critical>
-- <listed> <entry> ...": its entries are only split where a caller needs them.
local function parse_open(raw)
  if not raw then return {counts = {0, 0, 0}, listed = 0, rest = ''} end
  -- (The entries are cut off at their position: a pattern would go through them char by char.)
  local info, warning, critical, listed, at = string.match(raw, '^(%d+) (%d+) (%d+) (%d+) ?()')
  return {counts = {tonumber(info), tonumber(warning), tonumber(critical)}, listed = tonumber(listed),
          rest = at and string.sub(raw, at)}
end

local function open_total(state) return state.counts[1] + state.counts[2] + state.counts[3] end

local function open_state(class) return parse_open(redis.call('HGET', KEYS[K.classes], 'o:' .. class)) end

local function save_open(class, state)
  if open_total(state) == 0 then
    redis.call('HDEL', KEYS[K.classes], 'o:' .. class)
  else
    local raw = table.concat(state.counts, ' ') .. ' ' .. state.listed
    if state.rest ~= '' then raw = raw .. ' ' .. state.rest end
    redis.call('HSET', KEYS[K.classes], 'o:' .. class, raw)
  end
end

-- The per-class state of each of `class_list` (one read): {class = state}.
local function open_states(class_list)
  local found = {}
  if #class_list == 0 then return found end
  local fields = {}
  for i, class in ipairs(class_list) do fields[i] = 'o:' .. class end
  for i, raw in ipairs(redis.call('HMGET', KEYS[K.classes], unpack(fields))) do
    found[class_list[i]] = parse_open(raw or nil)
  end
  return found
end

local function newest_entry(raise, level, slot) return pad(raise) .. ':' .. level .. ':' .. slot end

-- The class's NEWEST newest open ones, from the open index: listed count, entries.
local function newest_open(class)
  local found = {}
  for level = 0, 2 do
    local head = class .. ':' .. level
    for _, member in ipairs(redis.call('ZREVRANGEBYLEX', KEYS[K.open], '(' .. head .. ';',
                                       '[' .. head .. ':', 'LIMIT', 0, NEWEST)) do
      local raise, slot = string.match(member, ':(%d+):(%d+)$')
      found[#found + 1] = raise .. ':' .. level .. ':' .. slot
    end
  end
  table.sort(found, function(x, y) return x > y end)
  for i = #found, NEWEST + 1, -1 do found[i] = nil end
  return #found, table.concat(found, ' ')
end

-- An open notification enters the open index at `place` (publish, or a change to open).
local function open_enter(place, slot)
  redis.call('ZADD', KEYS[K.open], 0, place .. ':' .. slot)
  local class, level, raise = place_parts(place)
  local state = open_state(class)
  local total = open_total(state)
  state.counts[level + 1] = state.counts[level + 1] + 1
  local entry = newest_entry(raise, level, slot)
  if state.listed == 0 then
    -- Nothing listed: the class had none open (the list is refilled before it runs out).
    if total == 0 then state.rest, state.listed = entry, 1 end
  elseif entry > string.match(state.rest, '^%S+') then
    -- The newest (a publish, a raise): first.
    state.rest = entry .. ' ' .. state.rest
    state.listed = state.listed + 1
  elseif state.listed == total or entry > string.match(state.rest, '(%S+)$') then
    -- Among the listed ones (a release of an older one): in its place.
    local list = words(state.rest)
    local at = #list + 1
    while at > 1 and list[at - 1] < entry do at = at - 1 end
    table.insert(list, at, entry)
    state.rest = table.concat(list, ' ')
    state.listed = state.listed + 1
  end
  if state.listed > NEWEST then
    state.rest = string.match(state.rest, '^(.*) %S+$')
    state.listed = NEWEST
  end
  save_open(class, state)
end

-- An open notification at `place` leaves the open index (a change, or the sweep).
local function open_leave(place, slot)
  redis.call('ZREM', KEYS[K.open], place .. ':' .. slot)
  local class, level, raise = place_parts(place)
  local state = open_state(class)
  state.counts[level + 1] = state.counts[level + 1] - 1
  local entry = newest_entry(raise, level, slot)
  local rest = state.rest
  -- Where it is in " <rest> ": the spaces before and after it.
  local before, after = string.find(' ' .. rest .. ' ', ' ' .. entry .. ' ', 1, true)
  if before then
    local head = before > 1 and string.sub(rest, 1, before - 2) or ''
    local tail = string.sub(rest, after)
    state.rest = (head ~= '' and tail ~= '') and (head .. ' ' .. tail) or (head .. tail)
    state.listed = state.listed - 1
  end
  if state.listed < NEWEST / 2 and state.listed < open_total(state) then
    state.listed, state.rest = newest_open(class)
  end
  save_open(class, state)
end
