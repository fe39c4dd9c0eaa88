-- --- Claims that expire --------------------------------------------------------------------------
-- SPEC 17: a claim held a type's claim timeout with no progress is let go by the system
-- (lua/expire_claims.lua). Progress is an action run on the alert after the claim (history
-- `action`, `action_succeeded`, `action_failed`, SPEC 14): it restarts the clock; a resolve
-- ends the claim anyway.
local PROGRESS = {action = true, action_succeeded = true, action_failed = true}

-- When the clock of a claimed alert's claim started: its claim, or its latest progress since.
local function claim_clock(slot, state)
  local started = tonumber(state.claimed_at) or 0
  local raw = redis.call('HGET', KEYS[K.history], slot)
  if raw then
    for _, entry in ipairs(cjson.decode('[' .. raw .. ']')) do
      if PROGRESS[entry.event] and tonumber(entry.at) > started then started = tonumber(entry.at) end
    end
  end
  return started
end

-- Lets the claim of `slot` go, by the system: open again as after a release (every snooze
-- wakes; unread again for whoever has not read it), history `claim_expired` (by null), and
-- the holder's streams are told: "claim_expired <cursor> <id> u:<holder>" on the events
-- channel. Returns the new cursor.
local function expire_claim(slot, state, id)
  local holder = state.claimed_by.id
  local cursor = reopen(slot, state, cjson.null, '', 'claim_expired')[2]
  tell_streams('claim_expired ' .. cursor .. ' ' .. id .. ' u:' .. text(holder))
  return cursor
end
