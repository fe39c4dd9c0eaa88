-- --- Flapping ------------------------------------------------------------------------------------
-- SPEC 17: a key (of one message type, in the warehouse) that made more than `most` new alerts
-- within `window` ms flaps: its next raise makes no new alert; the latest one is raised again
-- quietly instead (flap_fold). It stops once the key raised nothing for a whole window.
-- A key's record (notifications/keys.py flaps, field "<type code>|<alert key>"):
--   "<latest id> <last raise ms> <flapping 0/1> <ms> ...": the latest alert it made, when it last
--   raised (a folded raise too), whether it flaps, and when it made each new alert in the window.

-- The record of `field` as it stands at NOW: a key quiet for a window starts afresh.
local function flap_record(flaps_key, field, window)
  local parts = words(redis.call('HGET', flaps_key, field) or nil)
  local record = {latest = parts[1], flapping = parts[3] == '1', made = {}}
  if not parts[2] or NOW - tonumber(parts[2]) >= window then
    record.flapping = false
    return record
  end
  for i = 4, #parts do
    if NOW - tonumber(parts[i]) < window then record.made[#record.made + 1] = tonumber(parts[i]) end
  end
  return record
end

local function flap_save(flaps_key, field, record, window)
  local parts = {record.latest, text(NOW), record.flapping and '1' or '0'}
  for _, at in ipairs(record.made) do parts[#parts + 1] = text(at) end
  redis.call('HSET', flaps_key, field, table.concat(parts, ' '))
  redis.call('PEXPIRE', flaps_key, window)
end

-- Whether this raise of `field` folds: the latest alert's slot when it does (the record is
-- saved: still flapping, raised now); else nil and the record, for flap_made once the new
-- alert is stored. A latest alert already swept or expired cannot be raised again: the raise
-- makes a new one (which becomes the latest). `most` 0: nothing ever flaps.
local function flapping_into(flaps_key, field, most, window)
  local record = flap_record(flaps_key, field, window)
  if most > 0 and record.latest and (record.flapping or #record.made >= most) then
    local slot = redis.call('HGET', KEYS[K.ids], record.latest)
    if slot and live(slot) then
      record.flapping = true
      flap_save(flaps_key, field, record, window)
      return slot, record
    end
  end
  return nil, record
end

-- A new alert `id` made by the key (flapping_into said it does not fold).
local function flap_made(flaps_key, field, record, id, window)
  record.latest = id
  record.made[#record.made + 1] = NOW
  flap_save(flaps_key, field, record, window)
end

-- The latest alert raised again by a flapping key: occurrences + 1, "flapping": true, history
-- `flapping` (by null), counted in the day's report, and a new cursor (clients replace their
-- copy), but NOT a raise: every read and snooze of it stands, so it is unread again for nobody,
-- and nothing is pushed, reminded or e-mailed (the caller announces nothing). One claimed stays
-- claimed; one resolved is open again (the condition is back), at its old raise cursor: whoever
-- had read it still has it read. Returns the new cursor.
local function flap_fold(slot, type_code, retention)
  local state = state_of(slot)
  state.occurrences = (state.occurrences or 1) + 1
  state.flapping = true
  if state.status == 'resolved' then
    state.status = 'open'
    state.resolved_by = cjson.null
    state.resolved_at = cjson.null
  end
  count(type_code, 'flapping', retention)
  return change(slot, state, 'flapping', cjson.null)
end
