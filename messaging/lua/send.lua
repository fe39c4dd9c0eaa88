-- Sends a message: the next id of the chat, stored with its sender, body and time.
-- KEYS[1] meta (hash), KEYS[2] members (zset user -> seen id), KEYS[3] joined (hash),
-- KEYS[4] msgs (zset id -> JSON), KEYS[5] seq (string)       -- messaging.keys.chat_keys()
-- ARGV[1] sender's user id, ARGV[2] body, ARGV[3] now in ms
-- Publishes "<member id> ...\n<message JSON>" on the chat's events channel (see the end).
-- Returns false if the sender is not a member (or there is no such chat),
-- else {message JSON, {member user ids}}.
-- Preludes: idempotency, seen
-- (a send made before returns its record and stores nothing; a send stores it)
local prior = idempotency_prior()
if prior then return prior end
local seen = redis.call('ZSCORE', KEYS[2], ARGV[1])
if not seen then
  return false
end
-- Times never go backwards within a chat, so ids and times sort alike and the retention
-- sweep can remove old messages from the low end of the id range.
local now = math.max(tonumber(ARGV[3]), tonumber(redis.call('HGET', KEYS[1], 'last_ms') or '0'))
local id = redis.call('INCR', KEYS[5])
local msg = cjson.encode({id = id, sender = tonumber(ARGV[1]), body = ARGV[2], ts = now})
redis.call('ZADD', KEYS[4], id, msg)
redis.call('HSET', KEYS[1], 'last_ms', string.format('%.0f', now), 'last', msg)
-- A sender who had seen everything before has seen their own message too. One who had not
-- (others' messages arrived meanwhile) keeps their seen id, so a pending fetch still
-- delivers what they missed: nothing is skipped.
if tonumber(seen) == id - 1 then
  redis.call('ZADD', KEYS[2], id, ARGV[1])
  drop_seen_by_all(KEYS[2], KEYS[4])
end
local members = redis.call('ZRANGE', KEYS[2], 0, -1)
-- Tell open streams in the same script that stores the message. Channel:
-- messaging.keys.events_channel (the meta key's name with ":events" for ":meta").
redis.call('PUBLISH', (string.gsub(KEYS[1], ':meta$', ':events')),
           table.concat(members, ' ') .. '\n' .. msg)
return idempotency_store({msg, members})
