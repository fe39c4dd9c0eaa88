-- Wake a user's snooze of an alert now (DELETE .../snooze/): unread for them again, with a new
-- cursor, even when a "mark all read" of theirs covered it (SPEC 13).
-- Preludes: read_model
-- KEYS[1..23] the warehouse (read_model/01_layout.lua)   KEYS[24..] the inboxes the user sees
-- ARGV[1] now   ARGV[2] notification id   ARGV[3] user id   ARGV[4] username
-- Returns {code, ITEM fields, false}: "ok" woken (the new cursor), "same" not snoozed, or
--   {"missing"}.

local user = ARGV[3]
local slot = redis.call('HGET', KEYS[K.ids], ARGV[2])
if not slot or not live(slot) or not visible(slot, FIRST_OWN) then return {'missing'} end
if not snooze_of(user, slot) then return answer('same', slot, user) end
local cursor = next_cursor(slot)
wake(user, slot, actor_of(user, ARGV[4]), cursor)
return answer('ok', slot, user, cursor)
