-- What the stream needs to show one notification event to its users: the content and the
-- lifecycle state, and which of those users it is read for, by the prelude's one rule
-- (read_by: per-class watermarks, one-by-one reads, woken ones, snoozes); asked for (a
-- reminder, SPEC 14 and 17), also whom of them to tell loudly (to_tell: not silenced, unread,
-- not snoozed, not under their mute floor). One call and a short reply, however many users have
-- a stream open; no key per user.
-- Preludes: read_model
-- KEYS[1..23] the warehouse (read_model.lua)
-- ARGV[1] now   ARGV[2] notification id (UUID)   ARGV[3] "tell" to ask whom to tell, else ""
-- ARGV[4..] user ids
-- Returns {false} when it is gone, else {content JSON, state JSON or false, {position (1-based,
--   among ARGV[4..]) of each user it is read for, ...}, {position of each user to tell, ...}
--   (empty unless asked)}

local slot = redis.call('HGET', KEYS[K.ids], ARGV[2])
if not slot then return {false} end
local content = redis.call('HGET', KEYS[K.notes], slot)
if not content then return {false} end
local users, position = {}, {}
for i = 4, #ARGV do
  users[#users + 1] = ARGV[i]
  position[ARGV[i]] = i - 3
end
local class, _, raise = place_of(slot)
local read = read_by_users(users, slot, class, raise)
local read_at, tell_at = {}, {}
for i, user in ipairs(users) do
  if read[user] then read_at[#read_at + 1] = i end
end
if ARGV[3] == 'tell' then
  for _, user in ipairs(to_tell(users, slot)) do tell_at[#tell_at + 1] = position[user] end
end
return {content, redis.call('HGET', KEYS[K.states], slot) or false, read_at, tell_at}
