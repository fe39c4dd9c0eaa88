-- The alert lifecycle of one notification (SPEC section 7), one atomic call per change: claim,
-- release, resolve (by a user or by the system), escalate, re-raise, snooze and wake (per user),
-- and reading its history.
-- Publishing (lua/publish.lua) writes its flags, escalation due time and report count.
--
-- A notification keeps the cursor it was published with (its "slot") as its identity in the
-- inboxes, contents, read marks and every hash below. A change of status gives it a new cursor
-- from the warehouse sequence, kept in the changes zset (slot -> latest cursor) that polls merge
-- with the inboxes; so a change touches only per-warehouse keys, never the inboxes (escalation
-- adds one inbox, which the caller names). Every key is declared: one Redis Cluster slot.
--
-- KEYS[1]  cursor sequence               KEYS[2]  contents hash       KEYS[3]  ids hash
-- KEYS[4]  routes hash                   KEYS[5]  expiry zset         KEYS[6]  flags hash
-- KEYS[7]  states hash                   KEYS[8]  changes zset        KEYS[9]  history hash
-- KEYS[10] escalations zset              KEYS[11] today's report counts hash
-- KEYS[12] today's time-to-claim list    KEYS[13] today's time-to-resolve list
-- KEYS[14] the acting user's read marks  KEYS[15] readers set
-- KEYS[16] classes hash   KEYS[17] places hash   KEYS[18] open index zset
-- KEYS[19] watermarks hash   KEYS[20] markers hash   KEYS[21] readopen hash
--          (the read model: a change in or out of "open", of severity, of the inboxes it is in
--          or of its raise cursor keeps every user's unread count exact; see lua/inbox.lua)
-- KEYS[22] snoozes zset   KEYS[23] snoozers hash (see read_model.lua: an active snooze is the
--          snoozer's read mark; a re-raise, an escalation or a release wakes every snoozer)
-- KEYS[24..] claim, release, resolve, snooze, wake, history by a user: the inboxes the user sees
--            escalate: the escalation role's inbox (absent when the type has no role), then
--                      the read marks of each user in ARGV[9..], same order
--            reraise: the read marks of each user in ARGV[8..], same order
-- ARGV[1] op: claim | release | resolve | escalate | reraise | snooze | wake | wake_due | history
--            | release_held
-- ARGV[2] now, ms since the epoch
-- ARGV[3] notification id (UUID); escalate: the slot (from the escalations zset)
-- ARGV[4] acting user id ("" for the system)   ARGV[5] their username
-- ARGV[6] report retention, ms                 ARGV[7] most samples kept per duration list
-- escalate:  ARGV[8] the escalation role's subscriber id ("r:<id>", "" for none)
--            ARGV[9..] the user ids the caller read from the readers set (their marks are
--            dropped: an escalated alert is unread again for everyone, like a re-raised one)
-- reraise:   ARGV[8..] the user ids the caller read from the readers set
-- release_held: ARGV[8] the user who must still hold the claim (the system gives back the
--            claim of someone going off shift, SPEC 13; the event's `by` is null)
-- snooze:    ARGV[8] when it wakes, ms (the caller checked it is in the future)
-- claim:     ARGV[8] (optional, an action's press): the message types that have the action,
--            space-separated: "other_type" when it is of none of them, "same" (no change)
--            when the presser holds it already
-- wake_due:  ARGV[3] ""; ARGV[8..] "<user id>:<slot>" entries the caller read from the snoozes
--            zset as due; each still due is woken (by time), each gone is skipped
-- Every change that gives a new cursor also PUBLISHes "<cursor> <id> <inbox>..." on the
-- warehouse's events channel (see notifications/keys.py) for open streams.
-- Returns {code, cursor, content JSON, state JSON or false, extra, read by the user (1/0),
--          the user's snooze: when it wakes (ms) or false}:
--   "ok" changed (cursor is the new one); "same" nothing to change (idempotent);
--   "missing" unknown, expired, not visible to the user, or (escalate) done already;
--   "taken" claimed by someone else; "resolved" resolved already; "forbidden" not the claimer;
--   "other_type" (a press) not of a type that has the action: nothing changed.
--   history: extra = the events after publishing, comma-separated JSON objects.
--   reraise: extra = how many inboxes it is in (from its route).
--   reraise, escalate: {"readers", user id, ...} when the readers set differs from the user
--   ids given: retry with these.
--   wake_due: {how many were woken}.
-- Idempotency-Key (claim, release, resolve by a user): two more KEYS and one ARGV, last
-- (config/lua/idempotency.lua, put before this script): a request made before returns its
-- record and changes nothing; otherwise its answer, whatever it is, is recorded with it.

local op = ARGV[1]
local now = tonumber(ARGV[2])
local SEVERITIES = {'info', 'warning', 'critical'}
local LEVEL = {info = 0, warning = 1, critical = 2}
local LETTER = {open = 'o', claimed = 'c', resolved = 'r'}

local actor = cjson.null
if ARGV[4] ~= '' then
  actor = {id = tonumber(ARGV[4]), username = ARGV[5]}
end

local FIRST_EXTRA = 24

local function live(slot)
  local expires = redis.call('ZSCORE', KEYS[5], slot)
  return expires ~= false and tonumber(expires) > now
end

local function visible(slot)
  for i = FIRST_EXTRA, #KEYS do
    if redis.call('ZSCORE', KEYS[i], slot) then return true end
  end
  return false
end

local function state_of(slot)
  local raw = redis.call('HGET', KEYS[7], slot)
  if raw then return cjson.decode(raw) end
  local flag = redis.call('HGET', KEYS[6], slot) or 'o0'
  return {status = 'open', severity = SEVERITIES[tonumber(string.sub(flag, 2, 2)) + 1],
          claimed_by = cjson.null, claimed_at = cjson.null, resolved_by = cjson.null,
          resolved_at = cjson.null, escalated_at = cjson.null, occurrences = 1}
end

local function cursor_of(slot)
  local changed = redis.call('ZSCORE', KEYS[8], slot)
  return changed and string.format('%.0f', tonumber(changed)) or slot
end

local function snoozed_until(user, slot)
  if user == '' then return false end
  return redis.call('ZSCORE', KEYS[22], user .. ':' .. slot)
end

-- Every answer about one notification, recorded under the request's Idempotency-Key if any.
local function reply(code, slot, cursor, extra)
  local read = 0
  local snoozed = snoozed_until(ARGV[4], slot)
  if ARGV[4] ~= '' then
    local class, _, raise = place_in(KEYS[17], slot)
    if read_for(watermarks_of(KEYS[19], ARGV[4]), KEYS[14], KEYS[22], ARGV[4], slot, class, raise, now) then
      read = 1
    end
  end
  return idempotency_store({code, cursor or cursor_of(slot), redis.call('HGET', KEYS[2], slot),
          redis.call('HGET', KEYS[7], slot) or false, extra or false, read, snoozed or false})
end

local function missing() return idempotency_store({'missing'}) end

-- The read model's tally (read_model.lua, put in front of this script) over this script's keys.
local function tally_here(slot, place, delta) tally(KEYS[20], KEYS[19], KEYS[21], slot, place, delta) end

-- The class id of a set of inboxes: as notifications.keys.route_class computes it.
local function class_of(members)
  table.sort(members)
  return string.sub(redis.sha1hex(table.concat(members, ' ')), 1, 12), table.concat(members, ' ')
end

-- Writes the new state, gives the notification a new cursor and records the event. `how`:
-- class / members: the inboxes it is in now (escalation); raise: the raise cursor is the new one
-- (escalation and re-raise: read only for those who marked it read one by one since it was
-- raised; a "mark all read" before it no longer covers it); reraise: also every one-by-one read
-- dropped (unread again for everyone).
-- A new cursor for the slot: polls following next_since and open streams get it again. Tells
-- open streams as publish.lua does (see notifications/keys.py): the new cursor, then the route
-- "<id> <inbox> <inbox> ...", so no change goes without its event.
local function next_cursor(slot)
  local last = tonumber(redis.call('GET', KEYS[1]) or '0')
  local cursor = string.format('%.0f', math.max(last + 1, now * 1024))
  redis.call('SET', KEYS[1], cursor)
  redis.call('ZADD', KEYS[8], cursor, slot)
  redis.call('PUBLISH', (string.gsub(KEYS[1], ':seq$', ':events')),
             cursor .. ' ' .. (redis.call('HGET', KEYS[4], slot) or ''))
  return cursor
end

local function record(slot, entry)
  local encoded = cjson.encode(entry)
  local before = redis.call('HGET', KEYS[9], slot)
  redis.call('HSET', KEYS[9], slot, before and (before .. ',' .. encoded) or encoded)
end

local function save(slot, state, event, how)
  how = how or {}
  local cursor = next_cursor(slot)
  -- The read model: out of the open index (and its readers' counts) with its old place, into
  -- it with the new one, if open.
  local old = redis.call('HGET', KEYS[17], slot)
  local flag = redis.call('HGET', KEYS[6], slot)
  if old and is_open_flag(flag) then
    redis.call('ZREM', KEYS[18], old .. ':' .. slot)
    tally_here(slot, old, -1)
  end
  if how.reraise then
    for i = how.marks_from, #KEYS do redis.call('ZREM', KEYS[i], slot) end
    redis.call('HDEL', KEYS[20], slot)
  end
  if old then
    local class, _, raise = place_parts(old)
    if how.class and how.class ~= class then
      enter_class(KEYS[16], how.class, how.members)
      leave_class(KEYS[16], class)
      class = how.class
    end
    if how.raise then raise = tonumber(cursor) end
    local place = make_place(class, LEVEL[state.severity], raise)
    redis.call('HSET', KEYS[17], slot, place)
    if state.status == 'open' then
      redis.call('ZADD', KEYS[18], 0, place .. ':' .. slot)
      tally_here(slot, place, 1)
    end
  end
  redis.call('HSET', KEYS[7], slot, cjson.encode(state))
  redis.call('HSET', KEYS[6], slot, LETTER[state.status] .. LEVEL[state.severity])
  record(slot, {event = event, at = now, by = actor})
  return cursor
end

-- Ends `user`'s snooze of `slot` (`by`: who woke it, cjson.null for time or the system): out of
-- the snooze indexes, and its read mark (their name among the markers) dropped, correcting
-- their readopen count if it is open and raised after their watermark (invariant 2). Unread
-- again for them unless a "mark all read" of theirs covers it. The caller gives it a new
-- cursor, or is a change that gives one anyway.
local function wake(slot, user, by)
  drop_snooze(KEYS[22], KEYS[23], user, slot)
  if has_word(redis.call('HGET', KEYS[20], slot), user) then
    remove_word(KEYS[20], slot, user)
    local place = redis.call('HGET', KEYS[17], slot)
    if place and is_open_flag(redis.call('HGET', KEYS[6], slot)) then
      local class, level, raise = place_parts(place)
      if raise > user_watermark(KEYS[19], user, class) then
        drop_read_open(KEYS[21], user, class .. ':' .. level)
      end
    end
  end
  redis.call('HINCRBY', KEYS[19], 'v:' .. user, 1)
  record(slot, {event = 'woke', at = now, by = by})
end

-- A re-raise, an escalation or a release wakes every snoozer (bounded by who snoozed it).
local function wake_all(slot)
  local users = redis.call('HGET', KEYS[23], slot)
  if not users then return end
  for user in string.gmatch(users, '%S+') do wake(slot, user, cjson.null) end
end

-- The acting user read it (claiming is reading): a mark, and their name among its markers.
local function mark_read(slot)
  redis.call('ZADD', KEYS[14], redis.call('ZSCORE', KEYS[5], slot), slot)
  redis.call('SADD', KEYS[15], ARGV[4])
  local markers = redis.call('HGET', KEYS[20], slot)
  if not markers or not string.find(markers .. ' ', ' ' .. ARGV[4] .. ' ', 1, true) then
    redis.call('HSET', KEYS[20], slot, (markers or '') .. ' ' .. ARGV[4])
  end
  redis.call('HINCRBY', KEYS[19], 'v:' .. ARGV[4], 1)
end

-- The manager's report: per-day counts, and samples of time to claim and to resolve.
local function count(type_code, event)
  redis.call('HINCRBY', KEYS[11], type_code .. '|' .. event, 1)
  redis.call('PEXPIRE', KEYS[11], ARGV[6])
end

local function sample(key, type_code, ms)
  redis.call('RPUSH', key, type_code .. ' ' .. string.format('%.0f', ms))
  redis.call('LTRIM', key, 0, tonumber(ARGV[7]) - 1)
  redis.call('PEXPIRE', key, ARGV[6])
end

local function content_of(slot)
  return cjson.decode(redis.call('HGET', KEYS[2], slot))
end

-- Every reader's read marks key must be declared to drop their marks: the caller read the
-- readers set; when it has changed since, the answer asks to retry with the current one.
local function stale_readers(first)
  local readers = redis.call('SMEMBERS', KEYS[15])
  local given = {}
  for i = first, #ARGV do given[ARGV[i]] = true end
  local stale = #readers ~= #ARGV - first + 1
  for _, reader in ipairs(readers) do
    if not given[reader] then stale = true end
  end
  if not stale then return nil end
  local answer = {'readers'}
  for _, reader in ipairs(readers) do answer[#answer + 1] = reader end
  return answer
end

local prior = idempotency_prior()
if prior then return prior end

if op == 'escalate' then
  local slot = ARGV[3]
  local stale = stale_readers(9)
  if stale then return stale end
  -- Taking it out of the index first makes escalation happen once, whoever runs it.
  if redis.call('ZREM', KEYS[10], slot) == 0 or not live(slot) then return {'missing'} end
  local state = state_of(slot)
  if state.status ~= 'open' then return reply('same', slot) end
  -- More urgent now, and in more inboxes: unread again for everyone who sees it.
  local how = {raise = true, reraise = true, marks_from = FIRST_EXTRA}
  if ARGV[8] ~= '' then
    how.marks_from = FIRST_EXTRA + 1
    redis.call('ZADD', KEYS[FIRST_EXTRA], slot, slot)
    local route = redis.call('HGET', KEYS[4], slot) or ''
    -- The sweep removes what the route lists: the new inbox entry must be in it.
    if not string.find(route .. ' ', ' ' .. ARGV[8] .. ' ', 1, true) then
      route = route .. ' ' .. ARGV[8]
      redis.call('HSET', KEYS[4], slot, route)
      -- It is in one more inbox: its class is that of the new set of inboxes.
      local members = {}
      for word in string.gmatch(route, '%S+') do members[#members + 1] = word end
      table.remove(members, 1) -- the notification id
      how.class, how.members = class_of(members)
    end
  end
  state.severity = SEVERITIES[math.min(LEVEL[state.severity] + 1, 2) + 1]
  state.escalated_at = now
  count(content_of(slot).message_type, 'escalated')
  local cursor = save(slot, state, 'escalated', how)
  wake_all(slot)
  return reply('ok', slot, cursor)
end

if op == 'wake_due' then
  local woken = 0
  for i = 8, #ARGV do
    local due = redis.call('ZSCORE', KEYS[22], ARGV[i])
    -- Still due (not woken or snoozed again meanwhile by another call).
    if due and tonumber(due) <= now then
      local user, slot = string.match(ARGV[i], '^(%d+):(%d+)$')
      if live(slot) then
        wake(slot, user, cjson.null)
        next_cursor(slot)
        woken = woken + 1
      else
        -- Expired: nothing to come back; the sweep finishes the rest.
        drop_snooze(KEYS[22], KEYS[23], user, slot)
      end
    end
  end
  return {woken}
end

local slot = redis.call('HGET', KEYS[3], ARGV[3])
if not slot or not live(slot) then return missing() end
local by_user = ARGV[4] ~= ''
if by_user and op ~= 'reraise' and not visible(slot) then return missing() end
local state = state_of(slot)

if op == 'history' then
  return reply('ok', slot, nil, redis.call('HGET', KEYS[9], slot) or '')
end

if op == 'claim' then
  -- A press of an alert action (SPEC 14) claims in this same call: ARGV[8] names the types
  -- that have the action. Of another type, or held by the presser already, nothing changes.
  local pressed = ARGV[8]
  if pressed and not has_word(pressed, content_of(slot).message_type) then
    return reply('other_type', slot)
  end
  if state.status == 'resolved' then return reply('resolved', slot) end
  if state.status == 'claimed' and state.claimed_by.id ~= actor.id then
    return reply('taken', slot)
  end
  if pressed and state.status == 'claimed' then return reply('same', slot) end
  -- Taking it on ends my snooze of it (claiming is reading it, below).
  if snoozed_until(ARGV[4], slot) then wake(slot, ARGV[4], actor) end
  -- Claiming is also reading it, for the claimer (after the change: no longer open by then).
  if state.status == 'claimed' then
    mark_read(slot)
    return reply('same', slot)
  end
  state.status = 'claimed'
  state.claimed_by = actor
  state.claimed_at = now
  if state.first_claimed_at == nil then
    state.first_claimed_at = now
    local content = content_of(slot)
    count(content.message_type, 'claimed')
    sample(KEYS[12], content.message_type, now - content.created_at_ms)
  end
  local cursor = save(slot, state, 'claimed')
  mark_read(slot)
  return reply('ok', slot, cursor)
end

-- A claimed one open again (a release by its holder or by the system): whoever snoozed it
-- gets it back at once.
local function reopen()
  state.status = 'open'
  state.claimed_by = cjson.null
  state.claimed_at = cjson.null
  local cursor = save(slot, state, 'released')
  wake_all(slot)
  return reply('ok', slot, cursor)
end

if op == 'release' then
  if state.status == 'resolved' then return reply('resolved', slot) end
  if state.status == 'open' then return reply('same', slot) end
  if state.claimed_by.id ~= actor.id then return reply('forbidden', slot) end
  return reopen()
end

if op == 'release_held' then
  -- Only while that user still holds it: one released and claimed by a colleague since stays.
  if state.status ~= 'claimed' or tostring(state.claimed_by.id) ~= ARGV[8] then
    return reply('same', slot)
  end
  return reopen()
end

if op == 'resolve' then
  if state.status == 'resolved' then return reply('same', slot) end
  state.status = 'resolved'
  state.resolved_by = actor
  state.resolved_at = now
  redis.call('ZREM', KEYS[10], slot)
  local content = content_of(slot)
  count(content.message_type, 'resolved')
  sample(KEYS[13], content.message_type, now - content.created_at_ms)
  return reply('ok', slot, save(slot, state, 'resolved'))
end

if op == 'reraise' then
  if state.status == 'resolved' then return reply('resolved', slot) end
  -- Unread again for everyone: drop every reader's mark, which needs every reader's key.
  local stale = stale_readers(8)
  if stale then return stale end
  state.occurrences = (state.occurrences or 1) + 1
  local _, words = string.gsub(redis.call('HGET', KEYS[4], slot) or '', '%S+', '')
  local cursor = save(slot, state, 'reraised', {reraise = true, raise = true, marks_from = FIRST_EXTRA})
  wake_all(slot)
  return reply('ok', slot, cursor, math.max(words - 1, 0))
end

if op == 'snooze' then
  if state.status == 'resolved' then return reply('resolved', slot) end
  local uid = ARGV[4]
  local member = uid .. ':' .. slot
  if not redis.call('ZSCORE', KEYS[22], member) then
    -- The snooze is their read mark from now on: a one-by-one mark of theirs goes (waking must
    -- leave it unread), their name joins its markers and, if it is open and raised after their
    -- watermark, their readopen count (invariant 2).
    redis.call('ZREM', KEYS[14], slot)
    if not has_word(redis.call('HGET', KEYS[20], slot), uid) then
      add_word(KEYS[20], slot, uid)
      local place = redis.call('HGET', KEYS[17], slot)
      if place and is_open_flag(redis.call('HGET', KEYS[6], slot)) then
        local class, level, raise = place_parts(place)
        if raise > user_watermark(KEYS[19], uid, class) then
          bump_read_open(KEYS[21], uid, class .. ':' .. level)
        end
      end
    end
    add_word(KEYS[23], slot, uid)
    add_word(KEYS[23], 'u:' .. uid, slot)
  end
  local wakes = tonumber(ARGV[8])
  redis.call('ZADD', KEYS[22], wakes, member)
  redis.call('HINCRBY', KEYS[19], 'v:' .. uid, 1)
  record(slot, {event = 'snoozed', at = now, by = actor, ['until'] = wakes})
  return reply('ok', slot)
end

if op == 'wake' then
  if not snoozed_until(ARGV[4], slot) then return reply('same', slot) end
  wake(slot, ARGV[4], actor)
  return reply('ok', slot, next_cursor(slot))
end

return redis.error_reply('ERR unknown lifecycle operation ' .. tostring(op))
