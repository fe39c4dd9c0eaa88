-- What the stream needs to show one notification event to its users: the content and the
-- lifecycle state of the notification, and which of those users has read it (a live read mark,
-- or a "mark all read" watermark at or above its raise cursor, as lua/inbox.lua counts it). One
-- call and a short reply, however many users have a stream open. A notification keeps the
-- cursor it was published with (its slot) in every hash and read mark; an event of a status
-- change carries its new cursor, so the slot is looked up by id.
--
-- KEYS[1] contents hash (slot -> JSON)   KEYS[2] ids hash (uuid -> slot)
-- KEYS[3] states hash (slot -> lifecycle JSON)
-- KEYS[4] watermarks hash (user id -> cursor)   KEYS[5] places hash (slot -> class:level:raise)
-- KEYS[6..] read marks zset of each user in ARGV[3..], in order
-- ARGV[1] notification id (UUID)    ARGV[2] now, ms since the epoch
-- ARGV[3..] user ids, in the order of KEYS[6..]
-- Returns {false} when it is gone, else {content JSON, state JSON or false,
--          position (1-based, among KEYS[6..]) of each user who read it, ...}

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
local place = redis.call('HGET', KEYS[5], slot)
local raise = tonumber(place and string.match(place, ':(%d+)$') or slot)
for i = 6, #KEYS do
  local score = redis.call('ZSCORE', KEYS[i], slot)
  local watermark = tonumber(redis.call('HGET', KEYS[4], ARGV[i - 3]) or '0')
  if (score and tonumber(score) > now) or raise <= watermark then
    reply[#reply + 1] = i - 5
  end
end
return reply
