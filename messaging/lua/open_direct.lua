-- Opens the one direct chat of a pair: creates it if missing, (re)adds whichever of the
-- pair is not a member (they see only messages sent from now on).
-- KEYS[1] meta (hash), KEYS[2] members (zset user -> seen id), KEYS[3] joined (hash),
-- KEYS[4] msgs (zset id -> JSON), KEYS[5] seq (string)       -- messaging.keys.chat_keys()
-- ARGV[1] now in ms, ARGV[2] the requesting user's id, ARGV[3] the other user's id
-- Returns {how many of the pair joined now (2 when created), membership version}.
local now = tonumber(ARGV[1])
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('HSET', KEYS[1], 'kind', 'direct', 'creator', ARGV[2],
    'created_ms', ARGV[1], 'last_ms', ARGV[1])
end
local seq = tonumber(redis.call('GET', KEYS[5]) or '0')
local added = 0
for i = 2, 3 do
  if not redis.call('ZSCORE', KEYS[2], ARGV[i]) then
    redis.call('ZADD', KEYS[2], seq, ARGV[i])
    redis.call('HSET', KEYS[3], ARGV[i], seq)
    added = added + 1
  end
end
local ver = tonumber(redis.call('HGET', KEYS[1], 'mver') or '0')
if added > 0 then
  ver = math.max(now * 1000, ver + 1)
  local last = math.max(now, tonumber(redis.call('HGET', KEYS[1], 'last_ms')))
  redis.call('HSET', KEYS[1], 'mver', string.format('%.0f', ver),
    'last_ms', string.format('%.0f', last))
end
return {added, ver}
