-- Raise an open or claimed alert again (a rule's cool-down reminder, SPEC 7): occurrences + 1,
-- a new raise cursor, so every user's read of it is outdated (unread again for everyone)
-- without naming any reader, and every snooze of it wakes.
-- Preludes: read_model
-- KEYS[1..23] the warehouse (read_model/01_layout.lua)
-- ARGV[1] now   ARGV[2] notification id
-- ARGV[3] the id of the planned silence that covers it now ("" none): an open one is raised
--          silenced (held back, read_model/ hold_back)   ARGV[4] report retention, ms
-- Returns {code, ITEM fields (read 0), how many inboxes it is in}: "ok" raised again,
--   "resolved", or {"missing"}.

local slot = redis.call('HGET', KEYS[K.ids], ARGV[2])
if not slot or not live(slot) then return {'missing'} end
local state = state_of(slot)
if state.status == 'resolved' then return answer('resolved', slot, '') end
state.occurrences = (state.occurrences or 1) + 1
local _, inboxes = string.gsub(redis.call('HGET', KEYS[K.routes], slot) or '', '%S+', '')
local held = ARGV[3] and ARGV[3] ~= '' and state.status == 'open'
local content = content_of(slot)
if held then hold_back(slot, state, ARGV[3], content.message_type, ARGV[4]) end
local cursor = change(slot, state, 'reraised', cjson.null, {raise = true})
-- A raise held back reaches nobody, so it does not count against anyone's noise budget.
if not held then
  noise_raise(slot)
  report_reached(slot, ARGV[4])
end
report_key(content.message_type, content.key, ARGV[4])
return answer('ok', slot, '', cursor, math.max(inboxes - 1, 0))
