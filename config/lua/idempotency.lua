-- Idempotency-Key records (config/idempotency.py), put before the scripts a key guards.
--
-- Takes: KEYS[last - 1], KEYS[last], ARGV[last] (config/lua_compose.py appends them)
-- The guarded script gets two more KEYS and one more ARGV, last:
-- KEYS[last - 1] the key's binding: the fingerprint of the request the key was first used for,
--            under a name of no warehouse or chat, so a key reused for a write in another slot
--            is refused too. On Redis Cluster it lives in another slot than the record: the
--            caller bound the key before, in a call of its own (idempotency_bind.lua), and
--            passes the record here again.
-- KEYS[last] the record (in the same hash slot as the write it guards)
-- ARGV[last] "<ttl ms> <fingerprint>\n<answer>" ("" when the request has no key: no record)
-- All are taken off KEYS and ARGV here, so the script below sees only its own.
-- Returns nothing itself: the script returns idempotency_prior() at its top when that is not
-- nil ({"idempotent-replay", record}: the request was made before, nothing is written; or
-- {"idempotent-replay", fingerprint}: the key is bound to another request), and returns its
-- reply through idempotency_store(reply) when it wrote: the record
-- "<fingerprint>\n<answer>\n<reply as JSON>" (and the binding) are stored with the write, in
-- the same script, so a write and its record exist together or not at all.
local IDEMPOTENCY_RECORD = table.remove(KEYS)
local IDEMPOTENCY_BINDING = table.remove(KEYS)
local IDEMPOTENCY_ARG = table.remove(ARGV)
local IDEMPOTENCY_TTL, IDEMPOTENCY_FINGERPRINT =
  string.match(IDEMPOTENCY_ARG, '^(%d+) ([^\n]*)\n')
-- Bound here, in the write itself (one Redis), or by the caller before (Redis Cluster).
local IDEMPOTENCY_BINDS_HERE = IDEMPOTENCY_BINDING ~= IDEMPOTENCY_RECORD

local function idempotency_read(record_key)
  return redis.call('GET', record_key)
end

local function idempotency_write(record_key, value, ttl)
  redis.call('SET', record_key, value, 'PX', ttl)
end

local function idempotency_prior()
  if IDEMPOTENCY_ARG == '' then return nil end
  if IDEMPOTENCY_BINDS_HERE then
    local bound = idempotency_read(IDEMPOTENCY_BINDING)
    if bound and bound ~= IDEMPOTENCY_FINGERPRINT then return {'idempotent-replay', bound} end
  end
  local prior = idempotency_read(IDEMPOTENCY_RECORD)
  if not prior then return nil end
  return {'idempotent-replay', prior}
end

local function idempotency_store(reply)
  if IDEMPOTENCY_ARG ~= '' then
    local record = string.sub(IDEMPOTENCY_ARG, #IDEMPOTENCY_TTL + 2)
    idempotency_write(IDEMPOTENCY_RECORD, record .. '\n' .. cjson.encode(reply), IDEMPOTENCY_TTL)
    if IDEMPOTENCY_BINDS_HERE then
      idempotency_write(IDEMPOTENCY_BINDING, IDEMPOTENCY_FINGERPRINT, IDEMPOTENCY_TTL)
    end
  end
  return reply
end
