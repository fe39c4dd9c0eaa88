-- Binds an Idempotency-Key to the first request made with it, on Redis Cluster, before that
-- request's guarded write (elsewhere the write binds it itself: see idempotency.lua).
-- KEYS[1] the key's binding (config/idempotency.py; in a slot of its own)
-- ARGV[1] how long it is kept, ms          ARGV[2] the request's fingerprint
-- Returns the fingerprint the key is bound to: this request's when it was free.
local bound = redis.call('GET', KEYS[1])
if bound then return bound end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[1])
return ARGV[2]
