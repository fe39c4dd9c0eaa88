-- What the stream needs to show one notification event to its users: the content at the
-- cursor and which of those users has read it (a live read mark, as lua/inbox.lua counts it).
-- One call and a short reply, however many users have a stream open.
--
-- KEYS[1] contents hash (cursor -> JSON)    KEYS[2..] read marks zset of each user, in order
-- ARGV[1] cursor    ARGV[2] now, ms since the epoch
-- Returns {content JSON or false, position (1-based, among KEYS[2..]) of each user who read it}

local reply = {redis.call('HGET', KEYS[1], ARGV[1])}
if not reply[1] then
  return reply
end
local now = tonumber(ARGV[2])
for i = 2, #KEYS do
  local score = redis.call('ZSCORE', KEYS[i], ARGV[1])
  if score and tonumber(score) > now then
    reply[#reply + 1] = i - 1
  end
end
return reply
