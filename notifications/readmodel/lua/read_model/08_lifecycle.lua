-- --- Changes of status (the alert lifecycle, SPEC 7) ------------------------------------------

-- Records the event, gives the slot a new cursor and writes its new state, keeping the open
-- index and the tallies exact (invariants 1 and 2 of docs/architecture/read-model.md). `how`:
-- `raise` (a re-raise, an escalation): a new raise cursor, every snooze woken and every user's
-- read of it outdated (unread again for everyone); `class`, `members`: the inboxes it is in
-- now (an escalation; the caller wrote its route before, so the event reaches them).
local function change(slot, state, event, by, how)
  how = how or {}
  record(slot, {event = event, at = NOW, by = by})
  local cursor = next_cursor(slot)
  local old = redis.call('HGET', KEYS[K.places], slot)
  if old and is_open(slot) then
    open_leave(old, slot)
    tally(slot, old, -1)
  end
  if how.raise then
    wake_all(slot, nil)
    forget_reads(slot)
  end
  if old then
    local class, _, raise = place_parts(old)
    if how.class and how.class ~= class then
      enter_class(how.class, how.members)
      leave_class(class)
      class = how.class
    end
    if how.raise then raise = tonumber(cursor) end
    local place = make_place(class, LEVEL[state.severity], raise)
    redis.call('HSET', KEYS[K.places], slot, place)
    if state.status == 'open' and not state.silenced then
      open_enter(place, slot)
      tally(slot, place, 1)
    end
  end
  if state.status ~= 'open' then state.silenced, state.silence = nil, nil end
  redis.call('HSET', KEYS[K.states], slot, cjson.encode(state))
  redis.call('HSET', KEYS[K.flags], slot, flag_of(state))
  return cursor
end

-- The manager's report: per-day counts, and samples of time to claim and to resolve.
-- `retention` ms, `most` samples kept per list.
local function count(type_code, event, retention)
  redis.call('HINCRBY', KEYS[K.report], type_code .. '|' .. event, 1)
  redis.call('PEXPIRE', KEYS[K.report], retention)
end

local function sample(key, type_code, ms, retention, most)
  redis.call('RPUSH', key, type_code .. ' ' .. text(ms))
  redis.call('LTRIM', key, 0, most - 1)
  redis.call('PEXPIRE', key, retention)
end

local function content_of(slot) return cjson.decode(redis.call('HGET', KEYS[K.notes], slot)) end

-- The acting user of a change: {id, username}, or cjson.null for the system ("" id).
local function actor_of(id, username)
  if id == '' then return cjson.null end
  return {id = tonumber(id), username = username}
end

-- A change's answer: {code, the ITEM fields of the slot as `user` sees it, extra}.
local function answer(code, slot, user, cursor, extra)
  local reply = append({code}, item_for(slot, user, cursor))
  reply[#reply + 1] = extra or false
  return reply
end

-- A claimed one open again (released by its holder or by the system): every snooze wakes.
-- `event`: its history event (default `released`).
local function reopen(slot, state, by, user, event)
  state.status = 'open'
  state.claimed_by = cjson.null
  state.claimed_at = cjson.null
  local cursor = change(slot, state, event or 'released', by)
  wake_all(slot, cursor)
  return answer('ok', slot, user, cursor)
end
