-- The system gives back the claim of someone going off shift (SPEC 13): only while that user
-- still holds it; the event's `by` is null, and every snooze of it wakes.
-- Preludes: read_model
-- KEYS[1..23] the warehouse (read_model/01_layout.lua)
-- ARGV[1] now   ARGV[2] notification id   ARGV[3] the user who must still hold the claim
-- Returns {code, ITEM fields (read 0), false}: "ok" released, "same" not held by them, or
--   {"missing"}.

local slot = redis.call('HGET', KEYS[K.ids], ARGV[2])
if not slot or not live(slot) then return {'missing'} end
local state = state_of(slot)
if state.status ~= 'claimed' or tostring(state.claimed_by.id) ~= ARGV[3] then
  return answer('same', slot, '')
end
return reopen(slot, state, cjson.null, '')
