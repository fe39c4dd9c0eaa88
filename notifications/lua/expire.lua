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
-- KEYS[10] classes hash   KEYS[11] places hash   KEYS[12] open index zset
-- KEYS[13] watermarks hash   KEYS[14] markers hash   KEYS[15] readopen hash
--          (the read model's keys: a finished notification leaves its class, the open index
--          and the counts of those who read it one by one; see lua/inbox.lua)
-- KEYS[16] snoozes zset   KEYS[17] snoozers hash (a finished notification's snoozes go too)
-- KEYS[18..] inbox keys, one per removal (a key may repeat)
-- ARGV[1] f = how many notifications are finished
-- ARGV[2 .. 1+f] their cursors;  ARGV[2+f .. 1+2f] their ids (UUIDs)
-- ARGV[2+2f ..] one cursor per inbox key in KEYS[18..], same order
-- Returns {inbox entries removed, notifications removed}
-- Helpers (tally, leave_class, ...) come from read_model.lua, put in front by the loader.

local f = tonumber(ARGV[1])
local FIRST_INBOX = 18


-- Out of the open index and out of the counts of those who read it one by one.
local function retire(slot, place)
  redis.call('ZREM', KEYS[12], place .. ':' .. slot)
  tally(KEYS[14], KEYS[13], KEYS[15], slot, place, -1)
end

local removed = 0
for i = FIRST_INBOX, #KEYS do
  removed = removed + redis.call('ZREM', KEYS[i], ARGV[2 * f + i - FIRST_INBOX + 2])
end
local finished = 0
for i = 2, 1 + f do
  local c = ARGV[i]
  finished = finished + redis.call('ZREM', KEYS[4], c)
  local place = redis.call('HGET', KEYS[11], c)
  if place then
    if is_open_flag(redis.call('HGET', KEYS[5], c)) then retire(c, place) end
    leave_class(KEYS[10], (place_parts(place)))
    redis.call('HDEL', KEYS[11], c)
    redis.call('HDEL', KEYS[14], c)
  end
  redis.call('HDEL', KEYS[1], c)
  redis.call('HDEL', KEYS[3], c)
  redis.call('HDEL', KEYS[2], ARGV[i + f])
  redis.call('HDEL', KEYS[5], c)
  redis.call('HDEL', KEYS[6], c)
  redis.call('ZREM', KEYS[7], c)
  redis.call('HDEL', KEYS[8], c)
  redis.call('ZREM', KEYS[9], c)
  drop_snoozes_of(KEYS[16], KEYS[17], c)
end
return {removed, finished}
