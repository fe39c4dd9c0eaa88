-- Adds a user to a group chat; they see only messages sent after joining.
-- KEYS[1] meta (hash), KEYS[2] members (zset user -> seen id), KEYS[3] joined (hash),
-- KEYS[4] msgs (zset id -> JSON), KEYS[5] seq (string)       -- messaging.keys.chat_keys()
-- ARGV[1] the acting member's user id, ARGV[2] the new member's user id, ARGV[3] now in ms,
-- ARGV[4] the most members a chat may have
-- Returns false if the actor is not a member (or there is no such chat), else
-- {'added', membership version} | {'member', membership version} (already one: unchanged)
-- | {'direct'} (not a group chat) | {'full'}.
if not redis.call('ZSCORE', KEYS[2], ARGV[1]) then
  return false
end
if redis.call('HGET', KEYS[1], 'kind') ~= 'group' then
  return {'direct'}
end
local ver = tonumber(redis.call('HGET', KEYS[1], 'mver') or '0')
if redis.call('ZSCORE', KEYS[2], ARGV[2]) then
  return {'member', ver}
end
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[4]) then
  return {'full'}
end
local now = tonumber(ARGV[3])
local seq = tonumber(redis.call('GET', KEYS[5]) or '0')
redis.call('ZADD', KEYS[2], seq, ARGV[2])
redis.call('HSET', KEYS[3], ARGV[2], seq)
ver = math.max(now * 1000, ver + 1)
local last = math.max(now, tonumber(redis.call('HGET', KEYS[1], 'last_ms')))
redis.call('HSET', KEYS[1], 'mver', string.format('%.0f', ver),
  'last_ms', string.format('%.0f', last))
return {'added', ver}
