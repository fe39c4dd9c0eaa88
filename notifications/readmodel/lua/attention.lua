-- Who should be told loudly of one alert (pushed, reminded, a sound), of the given users: the
-- prelude's one rule (read_model/ to_tell: open and not silenced, unread for them, not
-- snoozed, not under their mute floor, not come quietly to them). One call for many users.
-- Preludes: read_model
-- KEYS[1..23] the warehouse (read_model/01_layout.lua)
-- ARGV[1] now   ARGV[2] notification id   ARGV[3] the noise budget per hour (0: off)
-- ARGV[4..] per user, their id and the inboxes they see in the warehouse: "7 u:7 r:2"
-- Returns the user ids to tell (none when the alert is gone).

local slot = redis.call('HGET', KEYS[K.ids], ARGV[2])
if not slot then return {} end
local users, inboxes = {}, {}
for i = 4, #ARGV do
  local user, seen = string.match(ARGV[i], '^(%S+)%s*(.*)$')
  users[#users + 1] = user
  inboxes[#inboxes + 1] = seen
end
return to_tell(users, slot, inboxes, tonumber(ARGV[3]))
