-- Snooze an alert for one user until a time (SPEC 13): read for them alone until it wakes.
-- Snoozing again moves the time.
-- Preludes: read_model
-- KEYS[1..23] the warehouse (read_model/01_layout.lua)   KEYS[24..] the inboxes the user sees
-- ARGV[1] now   ARGV[2] notification id   ARGV[3] user id   ARGV[4] username
-- ARGV[5] when it wakes, ms (the caller checked it is in the future)
-- Returns {code, ITEM fields, false}: "ok" snoozed, "resolved", or {"missing"}.

local user = ARGV[3]
local slot = redis.call('HGET', KEYS[K.ids], ARGV[2])
if not slot or not live(slot) or not visible(slot, FIRST_OWN) then return {'missing'} end
if state_of(slot).status == 'resolved' then return answer('resolved', slot, user) end
local wakes = tonumber(ARGV[5])
snooze(user, slot, wakes)
record(slot, {event = 'snoozed', at = NOW, by = actor_of(user, ARGV[4]), ['until'] = wakes})
return answer('ok', slot, user)
