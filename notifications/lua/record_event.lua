-- Record one event in a notification's history without changing its state or cursor: what a
-- feature did with it (an alert action started or ended, an e-mail about it went out).
--
-- KEYS[1] ids hash (uuid -> slot)   KEYS[2] expiry zset   KEYS[3] history hash
-- ARGV[1] notification id (UUID)   ARGV[2] now, ms since the epoch
-- ARGV[3] the event, a JSON object (`event`, `at`, `by`, and its own keys)
-- Idempotency-Key: one more KEY and ARGV, last (config/lua/idempotency.lua, put before this
-- script): an event recorded before under the same record is not recorded again.
-- Returns {1, slot} when recorded; {0} when the notification is unknown or expired (nothing
-- recorded); {"idempotent-replay", record} when recorded before.

local prior = idempotency_prior()
if prior then return prior end
local slot = redis.call('HGET', KEYS[1], ARGV[1])
if not slot then return {0} end
local expires = redis.call('ZSCORE', KEYS[2], slot)
if not expires or tonumber(expires) <= tonumber(ARGV[2]) then return {0} end
local before = redis.call('HGET', KEYS[3], slot)
redis.call('HSET', KEYS[3], slot, before and (before .. ',' .. ARGV[3]) or ARGV[3])
return idempotency_store({1, slot})
