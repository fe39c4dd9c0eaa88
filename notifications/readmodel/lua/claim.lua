-- Claim an alert for a user ("I'm on it", SPEC 7): of concurrent claimers exactly one wins;
-- claiming is also reading it, and ends the claimer's snooze of it.
-- Preludes: idempotency, read_model
-- KEYS[1..23] the warehouse (read_model/01_layout.lua)   KEYS[24..] the inboxes the user sees
-- ARGV[1] now   ARGV[2] notification id   ARGV[3] user id   ARGV[4] username
-- ARGV[5] report retention, ms   ARGV[6] most samples kept per duration list
-- ARGV[7] the message types that are read, not claimed (space-separated; "" none)
-- ARGV[8] (optional, a press of an alert action, SPEC 14) the message types that have the
--   action, space-separated
-- Returns {code, ITEM fields, false}: "ok" claimed now (the new cursor), "same" held already,
--   "taken" claimed by someone else, "resolved", "unclaimable" of a type of ARGV[7] (nothing
--   changed), or {"missing"} (unknown, expired, not visible); a press: "other_type" when it is
--   of none of the types (nothing changed), and "same" with nothing changed when the presser
--   holds it already.

local prior = idempotency_prior()
if prior then return prior end
local user = ARGV[3]
local slot = redis.call('HGET', KEYS[K.ids], ARGV[2])
if not slot or not live(slot) or not visible(slot, FIRST_OWN) then return idempotency_store({'missing'}) end
local pressed = ARGV[8]
if ARGV[7] ~= '' or pressed then
  local message_type = content_of(slot).message_type
  if has_word(ARGV[7], message_type) then return idempotency_store(answer('unclaimable', slot, user)) end
  if pressed and not has_word(pressed, message_type) then
    return idempotency_store(answer('other_type', slot, user))
  end
end
local state = state_of(slot)
local actor = actor_of(user, ARGV[4])
if state.status == 'resolved' then return idempotency_store(answer('resolved', slot, user)) end
if state.status == 'claimed' and state.claimed_by.id ~= actor.id then
  return idempotency_store(answer('taken', slot, user))
end
if pressed and state.status == 'claimed' then return idempotency_store(answer('same', slot, user)) end
if snooze_of(user, slot) then wake(user, slot, actor, redis.call('GET', KEYS[K.seq]) or slot) end
if state.status == 'claimed' then
  mark(user, slot)
  return idempotency_store(answer('same', slot, user))
end
state.status = 'claimed'
state.claimed_by = actor
state.claimed_at = NOW
if state.first_claimed_at == nil then
  state.first_claimed_at = NOW
  local content = content_of(slot)
  count(content.message_type, 'claimed', ARGV[5])
  sample(KEYS[K.claim_ms], content.message_type, NOW - content.created_at_ms, ARGV[5], tonumber(ARGV[6]))
end
local cursor = change(slot, state, 'claimed', actor)
-- After the change: no longer open by then, so the claimer's tally does not move.
mark(user, slot)
return idempotency_store(answer('ok', slot, user, cursor))
