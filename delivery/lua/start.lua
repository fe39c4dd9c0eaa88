-- Registers a canary before it is published: its token with Redis's time, and forgets the
-- canaries older than the window (at most ARGV[3] of them per call, with their arrivals).
-- KEYS[1] the warehouse's sent canaries (sorted set), KEYS[2] their arrivals (hash, delivery.keys.arrived)
-- ARGV[1] the canary's token, ARGV[2] the window (ms), ARGV[3] the most to forget per call
-- Returns the canary's publish time (ms, Redis's clock).
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local old = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[2]), 'LIMIT', 0,
  tonumber(ARGV[3]))
for _, token in ipairs(old) do
  redis.call('ZREM', KEYS[1], token)
  redis.call('HDEL', KEYS[2], token .. ':stream', token .. ':poll')
end
redis.call('ZADD', KEYS[1], now, ARGV[1])
return now
