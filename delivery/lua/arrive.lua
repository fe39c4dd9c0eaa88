-- Records that a canary arrived on a path, with Redis's clock at both ends. On the stream
-- path every process that serves streams records it and the slowest arrival is kept; on the
-- poll path the first read that saw it counts.
-- KEYS[1] the warehouse's sent canaries (sorted set), KEYS[2] their arrivals (hash, delivery.keys.arrived)
-- ARGV[1] the canary's token, ARGV[2] the path ("stream" or "poll")
-- Returns the ms from publish to this arrival, or false for a canary not (or no longer) known
-- or, on the poll path, seen before.
local sent = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not sent then
  return false
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local took = math.max(0, now - tonumber(sent))
local field = ARGV[1] .. ':' .. ARGV[2]
local before = redis.call('HGET', KEYS[2], field)
if before and ARGV[2] == 'poll' then
  return false
end
if not before or tonumber(before) < took then
  redis.call('HSET', KEYS[2], field, took)
end
return took
