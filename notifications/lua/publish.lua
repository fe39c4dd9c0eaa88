-- Deliver one notification into every subscriber inbox of (warehouse, message type), atomically.
--
-- The caller passes the subscriber list it has cached together with that list's token, so every
-- inbox key can be declared in KEYS. If the set changed since (token differs), nothing is
-- written and the current token and members are returned for the caller to retry with. Every
-- mirrored pair has a token, an empty one too: no token means the subscription mirror lost the
-- pair (Redis emptied or restarted empty, the key evicted), never "nobody subscribed".
--
-- KEYS[1]  subscriber set                  KEYS[2]  subscriber set token
-- KEYS[3]  cursor sequence                 KEYS[4]  contents hash (cursor -> JSON)
-- KEYS[5]  ids hash (uuid -> cursor)       KEYS[6]  routes hash (cursor -> "uuid sub sub ...")
-- KEYS[7]  expiry zset (cursor -> expires ms)
-- KEYS[8]  flags hash   KEYS[9] escalations zset   KEYS[10] today's report counts hash
--          (the alert lifecycle's keys: see lua/lifecycle.lua)
-- KEYS[11] classes hash   KEYS[12] places hash   KEYS[13] open index zset
--          (the read model's keys: see lua/inbox.lua)
-- KEYS[14..] inbox of each subscriber (notifications.keys.inbox: "<prefix>:inbox:<id>"),
--          sorted by subscriber id; the ids are read off these names
-- ARGV[1]  token of the caller's subscriber list ("" when it has none cached)
-- ARGV[2]  now, ms since the epoch          ARGV[3]  notification id (UUID)
-- ARGV[4]  content JSON                     ARGV[5]  expires at, ms since the epoch
-- ARGV[6]  severity digit (0 info, 1 warning, 2 critical)
-- ARGV[7]  escalation due, ms ("" never)    ARGV[8]  message type code
-- ARGV[9]  report retention, ms
-- ARGV[10] the route's class id (notifications.keys.route_class of the subscriber ids)
-- Publishes "<cursor> <id> <subscriber>..." on the warehouse's events channel (see the end).
-- Helpers (enter_class, make_place) come from read_model.lua, put in front by the loader.
-- Returns {1, cursor} (cursor "0" when there is nobody to deliver to and nothing to escalate),
--      or {0, current token, member, member, ...} when the caller's list is stale,
--      or {-1} when the pair is not mirrored: nothing written, the caller rebuilds it first,
--      or {-2} when the directory the caller resolved the type and warehouse from moved on
--      (directory/lua/version_check.lua: one more KEY and ARGV, before the Idempotency-Key's).
-- Idempotency-Key: two more KEYS and one ARGV, last (config/lua/idempotency.lua, put before this
-- script): a request made before returns its record and writes nothing; a publish stores it.

local prior = idempotency_prior()
if prior then return prior end
if directory_moved() then return {-2} end

local token = redis.call('GET', KEYS[2])
if not token then
  return {-1}
end
if token ~= ARGV[1] then
  local reply = {0, token}
  for _, member in ipairs(redis.call('SMEMBERS', KEYS[1])) do
    reply[#reply + 1] = member
  end
  return reply
end

local FIRST_INBOX = 14
-- Nobody to deliver to: nothing to store, unless it is due for escalation, which delivers it to
-- the escalation role however many subscribe (SPEC 11); then it is stored in no inbox yet.
if #KEYS < FIRST_INBOX and ARGV[7] == '' then
  return idempotency_store({1, '0'})
end

-- Redis does not roll back a script that fails half-way, so check the per-warehouse keys this
-- script writes before the first write, and undo the inbox writes if one inbox is not a sorted
-- set: either every inbox gets the notification or none does (without a TYPE per inbox).
local expected = {[3] = 'string', [4] = 'hash', [5] = 'hash', [6] = 'hash', [7] = 'zset',
                  [8] = 'hash', [9] = 'zset', [10] = 'hash', [11] = 'hash', [12] = 'hash',
                  [13] = 'zset'}
for i = 3, FIRST_INBOX - 1 do
  local kind = redis.call('TYPE', KEYS[i])['ok']
  if kind ~= 'none' and kind ~= expected[i] then
    return redis.error_reply('WRONGTYPE ' .. KEYS[i] .. ' is a ' .. kind .. ', not a '
                             .. expected[i] .. '; nothing was delivered')
  end
end

-- Strictly increasing per warehouse, and time-ordered: now_ms * 1024 leaves room for 1024
-- notifications per millisecond before the cursor runs ahead of the clock (it never repeats).
-- Stays below 2^53, so it is exact in Lua, in sorted-set scores and in JavaScript.
local last = tonumber(redis.call('GET', KEYS[3]) or '0')
local cursor = math.max(last + 1, tonumber(ARGV[2]) * 1024)
local c = string.format('%.0f', cursor)

for i = FIRST_INBOX, #KEYS do
  local done = redis.pcall('ZADD', KEYS[i], c, c)
  if type(done) == 'table' and done.err then
    for j = FIRST_INBOX, i - 1 do redis.call('ZREM', KEYS[j], c) end
    return redis.error_reply(done.err .. ' (' .. KEYS[i] .. '); nothing was delivered')
  end
end

-- The subscriber ids ("u:<id>", "r:<id>") from their inboxes' names: not sent twice.
local subscribers = {}
for i = FIRST_INBOX, #KEYS do
  subscribers[#subscribers + 1] = string.match(KEYS[i], '.*:inbox:(.*)$')
end

redis.call('SET', KEYS[3], c)
redis.call('HSET', KEYS[4], c, ARGV[4])
redis.call('HSET', KEYS[5], ARGV[3], c)
redis.call('HSET', KEYS[6], c, ARGV[3] .. ' ' .. table.concat(subscribers, ' '))
redis.call('ZADD', KEYS[7], ARGV[5], c)
-- The alert lifecycle: open with its severity, due for escalation, counted for the report.
redis.call('HSET', KEYS[8], c, 'o' .. ARGV[6])
if ARGV[7] ~= '' then redis.call('ZADD', KEYS[9], ARGV[7], c) end
redis.call('HINCRBY', KEYS[10], ARGV[8] .. '|published', 1)
redis.call('PEXPIRE', KEYS[10], ARGV[9])
-- The read model: its class (recorded once per new set of inboxes), its place, open.
local class = ARGV[10]
enter_class(KEYS[11], class, table.concat(subscribers, ' '))
local place = make_place(class, ARGV[6], cursor)
redis.call('HSET', KEYS[12], c, place)
redis.call('ZADD', KEYS[13], 0, place .. ':' .. c)

-- Tell open streams in the same script that delivers: no event without a delivery and no
-- delivery without an event. Channel: the warehouse's events channel (the sequence key's
-- name with ":events" for ":seq"); payload: cursor, id, inboxes (the convention in keys.py).
redis.call('PUBLISH', (string.gsub(KEYS[3], ':seq$', ':events')),
           c .. ' ' .. ARGV[3] .. ' ' .. table.concat(subscribers, ' '))
return idempotency_store({1, c})
