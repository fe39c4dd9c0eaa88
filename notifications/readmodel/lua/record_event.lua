-- Record one event in a notification's history without changing its state or cursor: what a
-- feature did with it (an alert action started or ended, an e-mail about it went out).
-- Preludes: idempotency, read_model
-- KEYS[1..23] the warehouse (read_model/01_layout.lua)
-- ARGV[1] now   ARGV[2] notification id (UUID)
-- ARGV[3] the event, a JSON object (`event`, `at`, `by`, and its own keys)
-- Returns {1, slot} when recorded; {0} when the notification is unknown or expired (nothing
-- recorded); {"idempotent-replay", record} when recorded before under the same record.

local prior = idempotency_prior()
if prior then return prior end
local slot = redis.call('HGET', KEYS[K.ids], ARGV[2])
if not slot or not live(slot) then return {0} end
local before = redis.call('HGET', KEYS[K.history], slot)
redis.call('HSET', KEYS[K.history], slot, before and (before .. ',' .. ARGV[3]) or ARGV[3])
return idempotency_store({1, slot})
