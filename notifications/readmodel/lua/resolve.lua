-- Resolve an alert, by a user who sees it or by the system (a rule's condition cleared);
-- idempotent. Snoozes of it wake at their time.
-- Preludes: idempotency, read_model
-- KEYS[1..23] the warehouse (read_model/01_layout.lua)   KEYS[24..] the inboxes the user sees (none for
--          the system)
-- ARGV[1] now   ARGV[2] notification id   ARGV[3] user id ("" the system)   ARGV[4] username
-- ARGV[5] report retention, ms   ARGV[6] most samples kept per duration list
-- ARGV[7] the message types that are read, not resolved (space-separated; "" none)
-- Returns {code, ITEM fields, false}: "ok" resolved (the new cursor), "same" resolved
--   already, "unclaimable" of a type of ARGV[7] (nothing changed), or {"missing"}.

local prior = idempotency_prior()
if prior then return prior end
local user = ARGV[3]
local slot = redis.call('HGET', KEYS[K.ids], ARGV[2])
if not slot or not live(slot) or (user ~= '' and not visible(slot, FIRST_OWN)) then
  return idempotency_store({'missing'})
end
if ARGV[7] ~= '' and has_word(ARGV[7], content_of(slot).message_type) then
  return idempotency_store(answer('unclaimable', slot, user))
end
local state = state_of(slot)
if state.status == 'resolved' then return idempotency_store(answer('same', slot, user)) end
local actor = actor_of(user, ARGV[4])
local content = content_of(slot)
-- The noise report: resolved by the system (a rule's condition cleared) before anyone claimed it.
if user == '' and not ever_claimed(state) then
  count(content.message_type, 'resolved_unclaimed_by_system', ARGV[5])
end
state.status = 'resolved'
state.resolved_by = actor
state.resolved_at = NOW
redis.call('ZREM', KEYS[K.escalations], slot)
count(content.message_type, 'resolved', ARGV[5])
sample(KEYS[K.resolve_ms], content.message_type, NOW - content.created_at_ms, ARGV[5], tonumber(ARGV[6]))
return idempotency_store(answer('ok', slot, user, change(slot, state, 'resolved', actor)))
