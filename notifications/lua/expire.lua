-- Remove one batch of expired notifications from inboxes, and finished ones from storage.
--
-- The caller splits big fan-outs into several calls so that no call runs long: it first sends
-- the inbox removals of a notification (in as many calls as needed), then its cursor among the
-- finished ones. A notification whose inbox removals were cut short stays in the expiry index
-- and is picked up again by the next sweep (every step is idempotent), and polls never show it
-- meanwhile because they check the expiry index.
--
-- KEYS[1] contents hash   KEYS[2] ids hash   KEYS[3] routes hash   KEYS[4] expiry zset
-- KEYS[5] flags hash   KEYS[6] states hash   KEYS[7] changes zset   KEYS[8] history hash
-- KEYS[9] escalations zset (the lifecycle's keys: see lua/lifecycle.lua)
-- KEYS[10..] inbox keys, one per removal (a key may repeat)
-- ARGV[1] f = how many notifications are finished
-- ARGV[2 .. 1+f] their cursors;  ARGV[2+f .. 1+2f] their ids (UUIDs)
-- ARGV[2+2f ..] one cursor per inbox key in KEYS[10..], same order
-- Returns {inbox entries removed, notifications removed}

local f = tonumber(ARGV[1])
local removed = 0
for i = 10, #KEYS do
  removed = removed + redis.call('ZREM', KEYS[i], ARGV[2 * f + i - 8])
end
local finished = 0
for i = 2, 1 + f do
  local c = ARGV[i]
  finished = finished + redis.call('ZREM', KEYS[4], c)
  redis.call('HDEL', KEYS[1], c)
  redis.call('HDEL', KEYS[3], c)
  redis.call('HDEL', KEYS[2], ARGV[i + f])
  redis.call('HDEL', KEYS[5], c)
  redis.call('HDEL', KEYS[6], c)
  redis.call('ZREM', KEYS[7], c)
  redis.call('HDEL', KEYS[8], c)
  redis.call('ZREM', KEYS[9], c)
end
return {removed, finished}
