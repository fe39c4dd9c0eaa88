-- What the stream needs to show one notification event to its users: the content and the
-- lifecycle state, which of those users it is read for, by the prelude's one rule (read_by:
-- per-class watermarks, one-by-one reads, woken ones, snoozes), and which of them it came
-- quietly to (quiet_users: the noise budget, SPEC 17); asked for (a reminder, SPEC 14 and 17),
-- also whom of them to tell loudly (to_tell: open and not silenced, unread, not snoozed, not
-- under their mute floor, not come quietly to them). One call and a short reply, however many
-- users have a stream open; no key per user.
-- Preludes: read_model
-- KEYS[1..23] the warehouse (read_model/01_layout.lua)
-- ARGV[1] now   ARGV[2] notification id (UUID)   ARGV[3] "tell" to ask whom to tell, else ""
-- ARGV[4] the noise budget per hour (0: off)
-- ARGV[5..] per user, their id and the inboxes they see in the warehouse: "7 u:7 r:2"
-- Returns {false} when it is gone, else {content JSON, state JSON or false, {position (1-based,
--   among ARGV[5..]) of each user it is read for, ...}, {position of each user it came quietly
--   to, ...}, {position of each user to tell, ...} (empty unless asked)}

local slot = redis.call('HGET', KEYS[K.ids], ARGV[2])
if not slot then return {false} end
local content = redis.call('HGET', KEYS[K.notes], slot)
if not content then return {false} end
local budget = tonumber(ARGV[4])
local users, inboxes, position = {}, {}, {}
for i = 5, #ARGV do
  local user, seen = string.match(ARGV[i], '^(%S+)%s*(.*)$')
  users[#users + 1] = user
  inboxes[#inboxes + 1] = seen
  position[user] = #users
end
local class, _, raise = place_of(slot)
local read = read_by_users(users, slot, class, raise)
local quiet = quiet_users(users, slot, inboxes, budget)
local read_at, quiet_at, tell_at = {}, {}, {}
for i, user in ipairs(users) do
  if read[user] then read_at[#read_at + 1] = i end
  if quiet[user] then quiet_at[#quiet_at + 1] = i end
end
if ARGV[3] == 'tell' then
  for _, user in ipairs(to_tell(users, slot, inboxes, budget)) do
    tell_at[#tell_at + 1] = position[user]
  end
end
return {content, redis.call('HGET', KEYS[K.states], slot) or false, read_at, quiet_at, tell_at}
