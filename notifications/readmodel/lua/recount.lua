-- Rebuilds a warehouse's counts from what they count (read_model/, "Counting without
-- scanning"): each class's open ones by severity and its newest (classes "o:<class>"), who holds
-- a watermark of each class ("m:<class>"), and each user's tallies ("r:<user>") from their
-- watermarks, one-by-one fields and snoozes; a watermark of every class ("*", or a plain number)
-- becomes one per class. Removes the tallies of the layout before (users "o:..."). Exact
-- whenever it runs; `manage.py migrate_read_state` runs it once per warehouse (then the classes
-- field "layout" is "counts" and the writes keep them). One call: its work grows with the
-- warehouse's classes, users with watermarks, and one-by-one fields and snoozes.
-- Preludes: read_model
-- KEYS[1..23] the warehouse (read_model/01_layout.lua)
-- ARGV[1] now   ARGV[2] "1" to rebuild also when the warehouse was counted already
-- Returns {classes counted, users counted}, or {-1, -1} when it was counted already.

if ARGV[2] ~= '1' and redis.call('HGET', KEYS[K.classes], 'layout') == 'counts' then return {-1, -1} end

-- Redis's Lua unpacks a few thousand values at most: long lists go in parts.
local function each_part(list, call)
  local found = {}
  for first = 1, #list, 1000 do
    local part = {}
    for i = first, math.min(first + 999, #list) do part[#part + 1] = list[i] end
    for _, value in ipairs(call(part)) do found[#found + 1] = value end
  end
  return found
end

local function drop(key, fields)
  each_part(fields, function(part)
    redis.call('HDEL', key, unpack(part))
    return {}
  end)
end

-- Classes: open ones by severity and the newest, from the open index; holders start again.
local classes, known, stale = {}, {}, {}
for _, field in ipairs(redis.call('HKEYS', KEYS[K.classes])) do
  if string.match(field, '^%x+$') then
    classes[#classes + 1] = field
    known[field] = true
  elseif string.match(field, '^[om]:') then
    stale[#stale + 1] = field
  end
end
drop(KEYS[K.classes], stale)
for _, class in ipairs(classes) do
  local state = {counts = {}}
  state.listed, state.rest = newest_open(class)
  for level = 0, 2 do
    local head = class .. ':' .. level
    state.counts[level + 1] = redis.call('ZLEXCOUNT', KEYS[K.open], '[' .. head .. ':', '(' .. head .. ';')
  end
  save_open(class, state)
end

-- Users: watermarks cover the open ones raised up to them.
local users, marks_of_user, tallies, holders, old = {}, {}, {}, {}, {}
local function user_seen(user)
  if not tallies[user] then
    tallies[user] = {}
    users[#users + 1] = user
  end
end
for _, field in ipairs(redis.call('HKEYS', KEYS[K.users])) do
  if string.match(field, '^%d+$') then
    user_seen(field)
  elseif string.match(field, '^o:') then
    old[#old + 1] = field
  elseif string.match(field, '^r:') then
    user_seen(string.sub(field, 3))
  end
end
drop(KEYS[K.users], old)
local raw_marks = each_part(users, function(part) return redis.call('HMGET', KEYS[K.users], unpack(part)) end)
for i, user in ipairs(users) do
  local marks = parse_marks(raw_marks[i] or nil)
  if marks['*'] then
    for _, class in ipairs(classes) do marks[class] = marks[class] or marks['*'] end
    marks['*'] = nil
    save_marks(user, marks)
  end
  marks_of_user[user] = marks
  local marked = {}
  for class in pairs(marks) do
    if known[class] then marked[#marked + 1] = class end
  end
  table.sort(marked)
  for _, class in ipairs(marked) do
    holders[class] = holders[class] or {}
    table.insert(holders[class], user)
    for level = 0, 2 do
      local head = class .. ':' .. level
      tallies[user][head] = redis.call('ZLEXCOUNT', KEYS[K.open], '[' .. head .. ':',
                                       '(' .. head .. ':' .. pad(marks[class] + 1))
    end
  end
end
for _, class in ipairs(classes) do
  if holders[class] then redis.call('HSET', KEYS[K.classes], 'm:' .. class, ' ' .. table.concat(holders[class], ' ')) end
end

-- One-by-one fields and snoozes: where a user's read state of an open one is not what their
-- watermark says.
local pairs_found, listed = {}, {}
local function pair(user, slot)
  local member = user .. ':' .. slot
  if not listed[member] then
    listed[member] = true
    pairs_found[#pairs_found + 1] = {user, slot, member}
  end
end
for _, field in ipairs(redis.call('HKEYS', KEYS[K.reads])) do
  local user, slot = string.match(field, '^(%d+):(%d+)$')
  if user then pair(user, slot) end
end
for _, member in ipairs(redis.call('ZRANGE', KEYS[K.snoozes], 0, -1)) do
  local user, slot = string.match(member, '^(%d+):(%d+)$')
  if user then pair(user, slot) end
end
local slots, members = {}, {}
for i, found in ipairs(pairs_found) do
  slots[i] = found[2]
  members[i] = found[3]
end
local places = each_part(slots, function(part) return redis.call('HMGET', KEYS[K.places], unpack(part)) end)
local flags = each_part(slots, function(part) return redis.call('HMGET', KEYS[K.flags], unpack(part)) end)
local owns = each_part(members, function(part) return redis.call('HMGET', KEYS[K.reads], unpack(part)) end)
local snoozed = each_part(members, function(part) return redis.call('ZMSCORE', KEYS[K.snoozes], unpack(part)) end)
for i, found in ipairs(pairs_found) do
  if places[i] and is_open_flag(flags[i]) then
    local user = found[1]
    local marks = marks_of_user[user] or {}
    local class, level, raise = place_parts(places[i])
    local read = read_by(marks, class, raise, owns[i] or nil, snoozed[i] ~= false)
    local covered = raise <= watermark_in(marks, class)
    if read ~= covered then
      user_seen(user)
      local head = class .. ':' .. level
      tallies[user][head] = (tallies[user][head] or 0) + (read and 1 or -1)
    end
  end
end

for _, user in ipairs(users) do
  local raw = format_counts(tallies[user])
  if raw == '' then redis.call('HDEL', KEYS[K.users], 'r:' .. user)
  else redis.call('HSET', KEYS[K.users], 'r:' .. user, raw) end
end
redis.call('HSET', KEYS[K.classes], 'layout', 'counts')
return {#classes, #users}
