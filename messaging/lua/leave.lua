-- A member leaves; the last one out deletes every key of the chat, except a direct chat's
-- sequence: the pair may open the chat again under the same id, and its message ids must go
-- on from where they were, never back to 1 (a client may remember `after=3`). That tiny key
-- goes when one of the pair is deleted (messaging.cleanup).
-- KEYS[1] meta (hash), KEYS[2] members (zset user -> seen id), KEYS[3] joined (hash),
-- KEYS[4] msgs (zset id -> JSON), KEYS[5] seq (string)       -- messaging.keys.chat_keys()
-- ARGV[1] the leaving user's id, ARGV[2] now in ms
-- Returns false if they are not a member (or there is no such chat), else
-- {1 if the chat is gone else 0, membership version, last activity in ms}.
-- Preludes: seen
if not redis.call('ZSCORE', KEYS[2], ARGV[1]) then
  return false
end
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
local ver = math.max(tonumber(ARGV[2]) * 1000,
  tonumber(redis.call('HGET', KEYS[1], 'mver') or '0') + 1)
local last = tonumber(redis.call('HGET', KEYS[1], 'last_ms') or '0')
if redis.call('ZCARD', KEYS[2]) == 0 then
  if redis.call('HGET', KEYS[1], 'kind') == 'direct' then
    redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4])
  else
    redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5])
  end
  return {1, ver, last}
end
redis.call('HSET', KEYS[1], 'mver', string.format('%.0f', ver))
-- The one who left may have been the last not to have seen some messages.
drop_seen_by_all(KEYS[2], KEYS[4])
return {0, ver, last}
