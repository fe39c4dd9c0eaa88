-- Release an alert a user holds: open again, every snooze of it wakes (SPEC 7, 13).
-- Preludes: idempotency, read_model
-- KEYS[1..23] the warehouse (read_model/01_layout.lua)   KEYS[24..] the inboxes the user sees
-- ARGV[1] now   ARGV[2] notification id   ARGV[3] user id   ARGV[4] username
-- Returns {code, ITEM fields, false}: "ok" released (the new cursor), "same" open already,
--   "forbidden" held by someone else, "resolved", or {"missing"}.

local prior = idempotency_prior()
if prior then return prior end
local user = ARGV[3]
local slot = redis.call('HGET', KEYS[K.ids], ARGV[2])
if not slot or not live(slot) or not visible(slot, FIRST_OWN) then return idempotency_store({'missing'}) end
local state = state_of(slot)
if state.status == 'resolved' then return idempotency_store(answer('resolved', slot, user)) end
if state.status == 'open' then return idempotency_store(answer('same', slot, user)) end
if state.claimed_by.id ~= tonumber(user) then return idempotency_store(answer('forbidden', slot, user)) end
return idempotency_store(reopen(slot, state, actor_of(user, ARGV[4]), user))
