-- One alert's history for a user who sees it (SPEC 7): its events after publishing.
-- Preludes: read_model
-- KEYS[1..23] the warehouse (read_model/01_layout.lua)   KEYS[24..] the inboxes the user sees
-- ARGV[1] now   ARGV[2] notification id   ARGV[3] user id
-- Returns {"ok", ITEM fields, the events (comma-separated JSON objects)}, or {"missing"}.

local slot = redis.call('HGET', KEYS[K.ids], ARGV[2])
if not slot or not live(slot) or not visible(slot, FIRST_OWN) then return {'missing'} end
return answer('ok', slot, ARGV[3], nil, redis.call('HGET', KEYS[K.history], slot) or '')
