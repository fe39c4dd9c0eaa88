-- Retention: removes a chat's messages sent before a cutoff, oldest first, at most a batch.
-- KEYS[1] meta (hash), KEYS[2] members (zset user -> seen id), KEYS[3] joined (hash),
-- KEYS[4] msgs (zset id -> JSON), KEYS[5] seq (string)       -- messaging.keys.chat_keys()
-- ARGV[1] cutoff in ms, ARGV[2] batch size
-- Returns {messages removed, 1 if a full batch was removed (call again) else 0}.
local cutoff = tonumber(ARGV[1])
local batch = tonumber(ARGV[2])
-- Message times never decrease with ids (send.lua), so the old ones are a prefix.
local oldest = redis.call('ZRANGE', KEYS[4], 0, batch - 1, 'WITHSCORES')
local removed = 0
local up_to
for i = 1, #oldest, 2 do
  if cjson.decode(oldest[i]).ts >= cutoff then
    break
  end
  removed = removed + 1
  up_to = oldest[i + 1]
end
if up_to then
  redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', up_to)
end
-- The preview copy of the newest message is a message too.
local last = redis.call('HGET', KEYS[1], 'last')
if last and cjson.decode(last).ts < cutoff then
  redis.call('HDEL', KEYS[1], 'last')
end
if removed == batch then
  return {removed, 1}
end
return {removed, 0}
