-- --- Counting without scanning: each user's read counts (see 05_tallies_open.lua) ----------

-- A user's counts: {"<class>:<level>" = n}.
local function parse_counts(raw)
  local counts = {}
  for head, n in string.gmatch(raw or '', '(%S+)=(%-?%d+)') do counts[head] = tonumber(n) end
  return counts
end

local function format_counts(counts)
  local parts = {}
  for head, n in pairs(counts) do
    if n ~= 0 then parts[#parts + 1] = head .. '=' .. text(n) end
  end
  table.sort(parts)
  return table.concat(parts, ' ')
end

-- Adds deltas[i] to the count of `head` of users[i] (three calls, however many users).
local function add_counts(users, deltas, head)
  local moved, fields = {}, {}
  for i, user in ipairs(users) do
    if deltas[i] ~= 0 then
      moved[#moved + 1] = i
      fields[#fields + 1] = 'r:' .. user
    end
  end
  if #fields == 0 then return end
  local raws = redis.call('HMGET', KEYS[K.users], unpack(fields))
  local set, gone = {}, {}
  for j, i in ipairs(moved) do
    local counts = parse_counts(raws[j] or nil)
    counts[head] = (counts[head] or 0) + deltas[i]
    local raw = format_counts(counts)
    if raw == '' then gone[#gone + 1] = fields[j] else
      set[#set + 1] = fields[j]
      set[#set + 1] = raw
    end
  end
  if #set > 0 then redis.call('HSET', KEYS[K.users], unpack(set)) end
  if #gone > 0 then redis.call('HDEL', KEYS[K.users], unpack(gone)) end
end

-- Who has a field or a snooze of the slot.
local function who(slot) return words(redis.call('HGET', KEYS[K.reads], slot)) end

-- An open notification at `place` enters (sign 1) or leaves (sign -1) the counts of every user
-- it is read for.
local function tally(slot, place, sign)
  local class, level, raise = place_parts(place)
  local users, listed = who(slot), {}
  for _, user in ipairs(users) do listed[user] = true end
  for _, user in ipairs(words(redis.call('HGET', KEYS[K.classes], 'm:' .. class))) do
    if not listed[user] then
      listed[user] = true
      users[#users + 1] = user
    end
  end
  if #users == 0 then return end
  local read = read_by_users(users, slot, class, raise)
  local deltas = {}
  for i, user in ipairs(users) do deltas[i] = read[user] and sign or 0 end
  add_counts(users, deltas, class .. ':' .. level)
end
