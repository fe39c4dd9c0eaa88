-- Idempotency-Key records (config/idempotency.py), put before the scripts a key guards.
--
-- The guarded script gets one more KEY and one more ARGV, last:
-- KEYS[last] the record (in the same hash slot as the write it guards)
-- ARGV[last] "<ttl ms> <fingerprint>\n<answer>" ("" when the request has no key: no record)
-- Both are taken off KEYS and ARGV here, so the script below sees only its own.
-- Returns nothing itself: the script returns idempotency_prior() at its top when that is not
-- nil ({"idempotent-replay", record}: the request was made before, nothing is written), and
-- returns its reply through idempotency_store(reply) when it wrote: the record
-- "<fingerprint>\n<answer>\n<reply as JSON>" is stored with the write, in the same script, so
-- a write and its record exist together or not at all.
local IDEMPOTENCY_RECORD = table.remove(KEYS)
local IDEMPOTENCY_ARG = table.remove(ARGV)

local function idempotency_read(record_key)
  return redis.call('GET', record_key)
end

local function idempotency_write(record_key, value, ttl)
  redis.call('SET', record_key, value, 'PX', ttl)
end

local function idempotency_prior()
  if IDEMPOTENCY_ARG == '' then return nil end
  local prior = idempotency_read(IDEMPOTENCY_RECORD)
  if not prior then return nil end
  return {'idempotent-replay', prior}
end

local function idempotency_store(reply)
  if IDEMPOTENCY_ARG ~= '' then
    local ttl, record = string.match(IDEMPOTENCY_ARG, '^(%d+) (.*)$')
    idempotency_write(IDEMPOTENCY_RECORD, record .. '\n' .. cjson.encode(reply), ttl)
  end
  return reply
end

