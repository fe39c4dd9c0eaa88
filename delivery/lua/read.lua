-- Reads a warehouse's canaries of the window: each one's publish time and arrivals.
-- KEYS[1] the warehouse's sent canaries (sorted set), KEYS[2] their arrivals (hash)
-- ARGV[1] the window (ms), ARGV[2] the most canaries to read (the newest)
-- Returns {now, {token, sent, stream or false, poll or false}, ...}, oldest first.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local found = redis.call('ZREVRANGEBYSCORE', KEYS[1], '+inf', now - tonumber(ARGV[1]),
  'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[2]))
local out = {now}
for i = #found - 1, 1, -2 do
  local token = found[i]
  local arrived = redis.call('HMGET', KEYS[2], token .. ':stream', token .. ':poll')
  out[#out + 1] = {token, tonumber(found[i + 1]), arrived[1], arrived[2]}
end
return out
