-- Escalate one alert due in the escalations index (SPEC 7, 11): taken out of the index first,
-- so it happens once whoever runs it; one still open goes to the escalation role's inbox,
-- one step more severe, with a new raise cursor (unread again for everyone who sees it, no
-- reader named) and every snooze of it woken.
-- Preludes: read_model
-- KEYS[1..23] the warehouse (read_model/01_layout.lua)
-- KEYS[24] the escalation role's inbox (absent when the type has no role)
-- ARGV[1] now   ARGV[2] the slot   ARGV[3] the escalation role's subscriber id ("r:<id>", "")
-- ARGV[4] report retention, ms
-- Returns {code, ITEM fields (read 0), false}: "ok" escalated, "same" no longer open, or
--   {"missing"} (done already, or gone).

local slot = ARGV[2]
if redis.call('ZREM', KEYS[K.escalations], slot) == 0 or not live(slot) then return {'missing'} end
local state = state_of(slot)
-- A silenced one is not escalated (SPEC 17): its end indexes it again, like a new alert.
if state.status ~= 'open' or state.silenced then return answer('same', slot, '') end
local how = {raise = true}
if ARGV[3] ~= '' then
  redis.call('ZADD', KEYS[FIRST_OWN], slot, slot)
  local route = redis.call('HGET', KEYS[K.routes], slot) or ''
  -- The sweep removes what the route lists: the new inbox entry must be in it.
  if not has_word(route, ARGV[3]) then
    route = route .. ' ' .. ARGV[3]
    redis.call('HSET', KEYS[K.routes], slot, route)
    local members = words(route)
    table.remove(members, 1) -- the notification id
    how.class, how.members = class_of(members)
  end
end
state.severity = SEVERITIES[math.min(LEVEL[state.severity] + 1, 2) + 1]
state.escalated_at = NOW
count(content_of(slot).message_type, 'escalated', ARGV[4])
local cursor = change(slot, state, 'escalated', cjson.null, how)
noise_raise(slot)
report_reached(slot, ARGV[4])
return answer('ok', slot, '', cursor)
