-- --- What a notification is -------------------------------------------------------------------

-- Stored and not expired (expired ones are never shown, swept or not).
local function live(slot)
  local expires = redis.call('ZSCORE', KEYS[K.expiry], slot)
  return expires ~= false and tonumber(expires) > NOW
end

-- In one of KEYS[first..] (the inboxes a user sees: their own, then one per role).
local function visible(slot, first)
  for i = first, #KEYS do
    if redis.call('ZSCORE', KEYS[i], slot) then return true end
  end
  return false
end

-- The cursor of its latest change, or its slot.
local function cursor_of(slot)
  local changed = redis.call('ZSCORE', KEYS[K.changes], slot)
  return changed and text(tonumber(changed)) or slot
end

local function is_open_flag(flag)
  return not flag or string.byte(flag, 1) == 111 -- 'o'
end

local function is_open(slot) return is_open_flag(redis.call('HGET', KEYS[K.flags], slot)) end

-- class (text), severity digit (number), raise cursor (number) of a place.
local function place_parts(place)
  local class, level, raise = string.match(place, '^(.-):(%d):(%d+)$')
  return class, tonumber(level), tonumber(raise)
end

local function make_place(class, level, raise) return class .. ':' .. level .. ':' .. pad(raise) end

-- class, severity digit, raise cursor of a slot (nil class and level 0: published before the
-- read model; its raise cursor is its slot).
local function place_of(slot)
  local place = redis.call('HGET', KEYS[K.places], slot)
  if not place then return nil, 0, tonumber(slot) end
  return place_parts(place)
end

local function state_of(slot)
  local raw = redis.call('HGET', KEYS[K.states], slot)
  if raw then return cjson.decode(raw) end
  local flag = redis.call('HGET', KEYS[K.flags], slot) or 'o0'
  return {status = 'open', severity = SEVERITIES[tonumber(string.sub(flag, 2, 2)) + 1],
          claimed_by = cjson.null, claimed_at = cjson.null, resolved_by = cjson.null,
          resolved_at = cjson.null, escalated_at = cjson.null, occurrences = 1}
end

-- A new cursor, strictly increasing per warehouse and time-ordered: now_ms * 1024 leaves room
-- for 1024 per millisecond (notifications.readmodel.CURSOR_PER_MS; a contract test pins it).
local function take_cursor()
  local last = tonumber(redis.call('GET', KEYS[K.seq]) or '0')
  local cursor = text(math.max(last + 1, NOW * 1024))
  redis.call('SET', KEYS[K.seq], cursor)
  return cursor
end

-- Tells open streams of a cursor (notifications/keys.py, "Events for open streams"): the
-- channel is the sequence key's name with ":events" for ":seq".
local function tell_streams(payload)
  redis.call('PUBLISH', (string.gsub(KEYS[K.seq], ':seq$', ':events')), payload)
end

-- A change of `slot`: a new cursor in changes, told to open streams with its route.
local function next_cursor(slot)
  local cursor = take_cursor()
  redis.call('ZADD', KEYS[K.changes], cursor, slot)
  tell_streams(cursor .. ' ' .. (redis.call('HGET', KEYS[K.routes], slot) or ''))
  return cursor
end

local function record(slot, entry)
  local encoded = cjson.encode(entry)
  local before = redis.call('HGET', KEYS[K.history], slot)
  redis.call('HSET', KEYS[K.history], slot, before and (before .. ',' .. encoded) or encoded)
end

-- The class id of a set of inboxes (sorted, joined by spaces): the first 12 hex digits of its
-- SHA-1, as notifications.readmodel.route_class computes it for publishing (a contract test
-- pins the pair).
local function class_of(members)
  table.sort(members)
  local joined = table.concat(members, ' ')
  return string.sub(redis.sha1hex(joined), 1, 12), joined
end

local function enter_class(class, members)
  if redis.call('HSETNX', KEYS[K.classes], class, members) == 1 then
    for member in string.gmatch(members, '%S+') do add_word(KEYS[K.classes], 'i:' .. member, class) end
  end
  redis.call('HINCRBY', KEYS[K.classes], 'n:' .. class, 1)
end

local function leave_class(class)
  if redis.call('HINCRBY', KEYS[K.classes], 'n:' .. class, -1) > 0 then return end
  for member in string.gmatch(redis.call('HGET', KEYS[K.classes], class) or '', '%S+') do
    remove_word(KEYS[K.classes], 'i:' .. member, class)
  end
  redis.call('HDEL', KEYS[K.classes], class, 'n:' .. class, 'm:' .. class)
end

-- The classes the inboxes KEYS[first..] are in: a set and a list.
local function classes_seen(first)
  local seen, list = {}, {}
  local fields = {}
  for i = first, #KEYS do fields[#fields + 1] = 'i:' .. string.match(KEYS[i], '.*:inbox:(.*)$') end
  if #fields == 0 then return seen, list end
  for _, found in ipairs(redis.call('HMGET', KEYS[K.classes], unpack(fields))) do
    for class in string.gmatch(found or '', '%S+') do
      if not seen[class] then
        seen[class] = true
        list[#list + 1] = class
      end
    end
  end
  return seen, list
end
