-- What the stream needs to show one notification event to its users: the content and the
-- lifecycle state of the notification, and which of those users it is read for, by the read
-- model's one rule (read_for in read_model.lua, put in front by the loader: per-class
-- watermarks, one-by-one marks, snoozes). One call and a short reply, however many users have
-- a stream open. A notification keeps the cursor it was published with (its slot) in every
-- hash and read mark; an event of a status change carries its new cursor, so the slot is
-- looked up by id.
--
-- KEYS[1] contents hash (slot -> JSON)   KEYS[2] ids hash (uuid -> slot)
-- KEYS[3] states hash (slot -> lifecycle JSON)   KEYS[4] watermarks hash
-- KEYS[5] places hash   KEYS[6] snoozes zset
-- KEYS[7..] read marks zset of each user in ARGV[3..], in order
-- ARGV[1] notification id (UUID)    ARGV[2] now, ms since the epoch
-- ARGV[3..] user ids, in the order of KEYS[7..]
-- Returns {false} when it is gone, else {content JSON, state JSON or false,
--          position (1-based, among ARGV[3..]) of each user it is read for, ...}

local FIRST_MARKS = 7
local slot = redis.call('HGET', KEYS[2], ARGV[1])
if not slot then
  return {false}
end
local content = redis.call('HGET', KEYS[1], slot)
if not content then
  return {false}
end
local reply = {content, redis.call('HGET', KEYS[3], slot) or false}
local now = tonumber(ARGV[2])
local class, _, raise = place_in(KEYS[5], slot)
for i = FIRST_MARKS, #KEYS do
  local user = ARGV[i - FIRST_MARKS + 3]
  if read_for(watermarks_of(KEYS[4], user), KEYS[i], KEYS[6], user, slot, class, raise, now) then
    reply[#reply + 1] = i - FIRST_MARKS + 1
  end
end
return reply
