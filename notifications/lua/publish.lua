-- Deliver one notification into every subscriber inbox of (warehouse, message type), atomically.
--
-- The caller passes the subscriber list it has cached together with that list's token, so every
-- inbox key can be declared in KEYS. If the set changed since (token differs), nothing is
-- written and the current token and members are returned for the caller to retry with.
--
-- KEYS[1]  subscriber set                  KEYS[2]  subscriber set token
-- KEYS[3]  cursor sequence                 KEYS[4]  contents hash (cursor -> JSON)
-- KEYS[5]  ids hash (uuid -> cursor)       KEYS[6]  routes hash (cursor -> "uuid sub sub ...")
-- KEYS[7]  expiry zset (cursor -> expires ms)
-- KEYS[8..] inbox of each subscriber in ARGV[6..], same order
-- ARGV[1]  token of the caller's subscriber list ("" when it believes there are none)
-- ARGV[2]  now, ms since the epoch          ARGV[3]  notification id (UUID)
-- ARGV[4]  content JSON                     ARGV[5]  expires at, ms since the epoch
-- ARGV[6..] subscriber ids ("u:<id>", "r:<id>")
-- Publishes "<cursor> <id> <subscriber>..." on the warehouse's events channel (see the end).
-- Returns {1, cursor} (cursor "0" when there is nobody to deliver to),
--      or {0, current token, member, member, ...} when the caller's list is stale.

local token = redis.call('GET', KEYS[2]) or ''
if token ~= ARGV[1] then
  local reply = {0, token}
  for _, member in ipairs(redis.call('SMEMBERS', KEYS[1])) do
    reply[#reply + 1] = member
  end
  return reply
end

local inboxes = #KEYS - 7
if inboxes == 0 then
  return {1, '0'}
end

-- Redis does not roll back a script that fails half-way, so check every key this script writes
-- before the first write: either every inbox gets the notification or none does.
local expected = {[4] = 'hash', [5] = 'hash', [6] = 'hash', [7] = 'zset'}
for i = 3, #KEYS do
  local kind = redis.call('TYPE', KEYS[i])['ok']
  local want = expected[i] or (i == 3 and 'string') or 'zset'
  if kind ~= 'none' and kind ~= want then
    return redis.error_reply('WRONGTYPE ' .. KEYS[i] .. ' is a ' .. kind .. ', not a ' .. want
                             .. '; nothing was delivered')
  end
end

-- Strictly increasing per warehouse, and time-ordered: now_ms * 1024 leaves room for 1024
-- notifications per millisecond before the cursor runs ahead of the clock (it never repeats).
-- Stays below 2^53, so it is exact in Lua, in sorted-set scores and in JavaScript.
local last = tonumber(redis.call('GET', KEYS[3]) or '0')
local cursor = math.max(last + 1, tonumber(ARGV[2]) * 1024)
local c = string.format('%.0f', cursor)

local subscribers = {}
for i = 6, #ARGV do
  subscribers[#subscribers + 1] = ARGV[i]
end

redis.call('SET', KEYS[3], c)
redis.call('HSET', KEYS[4], c, ARGV[4])
redis.call('HSET', KEYS[5], ARGV[3], c)
redis.call('HSET', KEYS[6], c, ARGV[3] .. ' ' .. table.concat(subscribers, ' '))
redis.call('ZADD', KEYS[7], ARGV[5], c)
for i = 8, #KEYS do
  redis.call('ZADD', KEYS[i], c, c)
end
-- Tell open streams in the same script that delivers: no event without a delivery and no
-- delivery without an event. Channel: notifications.keys.events_channel (the sequence key's
-- name with ":events" for ":seq"); payload: cursor, id, inboxes (the convention in keys.py).
redis.call('PUBLISH', (string.gsub(KEYS[3], ':seq$', ':events')),
           c .. ' ' .. ARGV[3] .. ' ' .. table.concat(subscribers, ' '))
return {1, c}
