-- Who should be told loudly of one alert (pushed, reminded, a sound), of the given users: the
-- prelude's one rule (read_model.lua to_tell: open and not silenced, unread for them, not
-- snoozed, not under their mute floor). One call for many users.
-- Preludes: read_model
-- KEYS[1..21] the warehouse (read_model.lua)
-- ARGV[1] now   ARGV[2] notification id   ARGV[3..] user ids
-- Returns the user ids to tell (none when the alert is gone).

local slot = redis.call('HGET', KEYS[K.ids], ARGV[2])
if not slot then return {} end
local users = {}
for i = 3, #ARGV do users[#users + 1] = ARGV[i] end
return to_tell(users, slot)
