-- --- Noise report ---
-- SPEC 17's noise report (notifications/noise_report.py), counted at write time per UTC day,
-- kept as long as the alert report's counts (`retention` ms), so that the report reads a few
-- keys per day whatever the history:
--   noise_hours "<hour>|<class>": raises (publish, re-raise, escalation; not one held back
--     by a silence) of alerts of that class in that UTC hour (0-23), and "c|<class>": the
--     class's inboxes ("u:1 r:2"), so the report knows who saw them after the class is gone;
--   raised_keys "<type code>|<alert key>" scored by how often an alert with that key was
--     published or raised again that day (held back or not), at most RAISED_KEYS_KEPT of the
--     most raised.
-- The per-day report hash also counts `resolved_unclaimed_by_system` (resolve.lua).

local RAISED_KEYS_KEPT = 1000

-- A raise that reached its inboxes (`slot`'s place already written; `place`: that place, where
-- the caller has it).
local function report_reached(slot, retention, place)
  local class
  if place then class = place_parts(place) else class = place_of(slot) end
  if not class then return end
  local hour = math.floor(NOW / 3600000) % 24
  redis.call('HINCRBY', KEYS[K.noise_hours], hour .. '|' .. class, 1)
  if redis.call('HEXISTS', KEYS[K.noise_hours], 'c|' .. class) == 0 then
    redis.call('HSET', KEYS[K.noise_hours], 'c|' .. class, redis.call('HGET', KEYS[K.classes], class) or '')
  end
  redis.call('PEXPIRE', KEYS[K.noise_hours], retention)
end

-- An alert of `type_code` with alert key `key` ("" or nil: none) was published or raised again.
local function report_key(type_code, key, retention)
  if not key or key == '' or key == cjson.null then return end
  redis.call('ZINCRBY', KEYS[K.raised_keys], 1, type_code .. '|' .. key)
  redis.call('ZREMRANGEBYRANK', KEYS[K.raised_keys], 0, -(RAISED_KEYS_KEPT + 1))
  redis.call('PEXPIRE', KEYS[K.raised_keys], retention)
end

-- Whether anyone ever claimed the alert in `state` (first_claimed_at since claims set it; a
-- claim still held before that).
local function ever_claimed(state)
  return state.first_claimed_at ~= nil
    or (state.claimed_at ~= nil and state.claimed_at ~= cjson.null)
end
