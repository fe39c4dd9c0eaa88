-- What the stream needs to show one notification event to its users: the content and the
-- lifecycle state, and which of those users it is read for, by the prelude's one rule
-- (read_by: per-class watermarks, one-by-one reads, woken ones, snoozes). One call and a short
-- reply, however many users have a stream open; no key per user.
-- Preludes: read_model
-- KEYS[1..23] the warehouse (read_model.lua)
-- ARGV[1] now   ARGV[2] notification id (UUID)   ARGV[3..] user ids
-- Returns {false} when it is gone, else {content JSON, state JSON or false, position (1-based, among ARGV[3..]) of each user it is read for, ...}

local slot = redis.call('HGET', KEYS[K.ids], ARGV[2])
if not slot then return {false} end
local content = redis.call('HGET', KEYS[K.notes], slot)
if not content then return {false} end
local reply = {content, redis.call('HGET', KEYS[K.states], slot) or false}
local users = {}
for i = 3, #ARGV do users[#users + 1] = ARGV[i] end
local class, _, raise = place_of(slot)
local read = read_by_users(users, slot, class, raise)
for i, user in ipairs(users) do
  if read[user] then reply[#reply + 1] = i end
end
return reply
