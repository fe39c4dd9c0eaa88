-- Remove one batch of expired notifications from inboxes, and finished ones from storage.
--
-- The caller splits big fan-outs into several calls so that no call runs long: it first sends
-- the inbox removals of a notification (in as many calls as needed), then its cursor among the
-- finished ones. A notification whose inbox removals were cut short stays in the expiry index
-- and is picked up again by the next sweep (every step is idempotent), and polls never show it
-- meanwhile because they check the expiry index. A finished one leaves the open index and the
-- counts, its class, and every user's read, woken and snoozed state of it.
-- Preludes: read_model
-- KEYS[1..23] the warehouse (read_model/01_layout.lua)
-- KEYS[24..] inbox keys, one per removal (a key may repeat)
-- ARGV[1] now   ARGV[2] f = how many notifications are finished
-- ARGV[3 .. 2+f] their cursors;  ARGV[3+f .. 2+2f] their ids (UUIDs)
-- ARGV[3+2f ..] one cursor per inbox key in KEYS[24..], same order
-- Returns {inbox entries removed, notifications removed, users' fields of them removed}

local f = tonumber(ARGV[2])
local removed = 0
for i = FIRST_OWN, #KEYS do
  removed = removed + redis.call('ZREM', KEYS[i], ARGV[2 + 2 * f + i - FIRST_OWN + 1])
end
local finished, reads = 0, 0
for i = 3, 2 + f do
  local c = ARGV[i]
  finished = finished + redis.call('ZREM', KEYS[K.expiry], c)
  local place = redis.call('HGET', KEYS[K.places], c)
  if place then
    if is_open(c) then
      open_leave(place, c)
      tally(c, place, -1)
    end
    leave_class((place_parts(place)))
    redis.call('HDEL', KEYS[K.places], c)
    noise_forget(c)
  end
  for _, user in ipairs(who(c)) do
    if snooze_of(user, c) then drop_snooze(user, c) end
  end
  reads = reads + forget_reads(c)
  local flag = redis.call('HGET', KEYS[K.flags], c)
  if flag and string.sub(flag, 1, 1) == SILENCED then
    redis.call('ZREM', KEYS[K.silenced], state_of(c).silence .. ':' .. c)
  end
  redis.call('HDEL', KEYS[K.notes], c)
  redis.call('HDEL', KEYS[K.routes], c)
  redis.call('HDEL', KEYS[K.ids], ARGV[i + f])
  redis.call('HDEL', KEYS[K.flags], c)
  redis.call('HDEL', KEYS[K.states], c)
  redis.call('ZREM', KEYS[K.changes], c)
  redis.call('HDEL', KEYS[K.history], c)
  redis.call('ZREM', KEYS[K.escalations], c)
end
return {removed, finished, reads}
