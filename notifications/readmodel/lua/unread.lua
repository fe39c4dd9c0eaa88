-- A user's unread summary of a warehouse (GET /api/v1/notifications/unread/): the unread count,
-- by severity, and the newest unread (newest raised first). Counts nothing: it reads the counts
-- kept at write time and each class's newest open ones (read_model/, "Counting without
-- scanning"), then the read state of the newest few in one batch.
-- Preludes: read_model
-- KEYS[1..23] the warehouse (read_model/01_layout.lua)   KEYS[24..] the inboxes the user sees
-- ARGV[1] now   ARGV[2] user id
-- ARGV[3] most expired but not yet swept notifications looked at to leave them out of counts
-- ARGV[4..6] the client's If-None-Match, as for list.lua
-- ARGV[7] how many of the newest unread
-- ARGV[8] the noise budget per hour (read_model/ "Noise budget"; 0: off)
-- ARGV[9] among how many of the newest unread to count those that came quietly
-- Returns the view head (read_model/ view_head), then quiet (how many of the newest ARGV[9]
--          unread came quietly to the user), the positions (1-based among the items) of the
--          newest unread that came quietly (space-separated), then ITEM fields per notification; or the view head alone with
--          "not modified".

local user = ARGV[2]
local unchanged, view = check_etag(user, ARGV[4], ARGV[5], ARGV[6])
if unchanged then return unchanged end

local marks = view.marks
local seen, class_list = classes_seen(FIRST_OWN)
local states = open_states(class_list)
local counts, gone, all_gone = unread_counts(user, view, seen, class_list, states, tonumber(ARGV[3]))
local reply = view_head('summary', counts, view.version)
local want = tonumber(ARGV[7])
if counts[1] + counts[2] + counts[3] <= 0 then want = 0 end
-- Counting the quiet ones looks on past the newest `want`, among the newest `scan` unread.
local budget = tonumber(ARGV[8] or '0')
local scan = (budget > 0 and want > 0) and math.max(tonumber(ARGV[9] or '0'), want) or want

-- Candidates, newest raised first: each class's newest open ones raised above the user's
-- watermark of it (then its open index below the last of them, when the class has more), and
-- the ones the user woke at or below the watermark of their class (SPEC 13). Entries are
-- "<raise>:<level>:<slot>" (the class known by the list).
local lists = {}
local chunk = want + 4
for _, class in ipairs(class_list) do
  local state, mark = states[class], watermark_in(marks, class)
  local floor, entries = pad(mark), string.gmatch(state.rest, '%S+')
  local list, taken, last
  -- The listed ones above the watermark, one at a time (split only as far as the merge takes
  -- them); when every listed one was above it and the class holds more, it goes on below the
  -- last.
  local function fetch()
    local entry = entries()
    if not entry then
      if last and taken == state.listed and taken < open_total(state) then
        list.below = string.sub(last, 1, 16)
      end
      return {}
    end
    if string.sub(entry, 1, 16) <= floor then return {} end
    taken, last = (taken or 0) + 1, entry
    return {entry}
  end
  list = pager(fetch, nil, 1)
  list.class, list.mark = class, mark
  lists[#lists + 1] = list
end
-- Woken ones under the watermark of their class, open: one more list, by raise.
if #view.woken > 0 then
  local woken = {buf = {}, pos = 1, done = true}
  local places = redis.call('HMGET', KEYS[K.places], unpack(view.woken))
  local flags = redis.call('HMGET', KEYS[K.flags], unpack(view.woken))
  for i, slot in ipairs(view.woken) do
    if places[i] and is_open_flag(flags[i]) then
      local class, level, raise = place_parts(places[i])
      if seen[class] and raise <= watermark_in(marks, class) then
        woken.buf[#woken.buf + 1] = newest_entry(raise, level, slot) .. ':' .. class
      end
    end
  end
  table.sort(woken.buf, function(x, y) return x > y end)
  lists[#lists + 1] = woken
end

-- A class whose listed ones are used up goes on in its open index, severity by severity.
local function go_on(list)
  local class, below, mark = list.class, list.below, list.mark
  list.below = nil
  -- Below the user's mute floor nothing is unread for them: those ranges are not read at all.
  for level = view.floor, 2 do
    local head = class .. ':' .. level
    local top, bottom = '(' .. head .. ':' .. below, '[' .. head .. ':' .. pad(mark + 1)
    lists[#lists + 1] = pager(function()
      local found = redis.call('ZREVRANGEBYLEX', KEYS[K.open], top, bottom, 'LIMIT', 0, chunk)
      if #found > 0 then top = '(' .. found[#found] end
      for i, member in ipairs(found) do
        local raise, slot = string.match(member, ':(%d+):(%d+)$')
        found[i] = raise .. ':' .. level .. ':' .. slot .. ':' .. class
      end
      return found
    end, nil, chunk)
  end
end

-- The next candidate of all lists: raise (text), level, slot, class; nil when none is left.
-- (A class that goes on adds its pagers to `lists`: this same loop reaches them.)
-- Counting the quiet ones past the newest `want` does not go on into the open index: where a
-- class would have to (`stopped`), the candidates end; they go on only to find the `want`.
local allow_go_on, stopped = scan <= want, false
local function next_candidate()
  local best, best_list
  for _, list in ipairs(lists) do
    local entry = head_of(list)
    if not entry and list.below then
      if not allow_go_on then
        stopped = true
        return nil
      end
      go_on(list)
    end
    if entry and (not best or entry > best) then best, best_list = entry, list end
  end
  if not best then return nil end
  best_list.pos = best_list.pos + 1
  local raise, level, slot, class = string.match(best, '^(%d+):(%d):(%d+):?(.*)$')
  if class == '' then class = best_list.class end
  return raise, tonumber(level), slot, class
end

-- In batches: the candidates' read state in one read each (their own fields, their snoozes when
-- the user has some, their expiry when some expired and are not swept yet). At most 200 + 4 x
-- the size candidates looked at.
local chosen = {}
local looked, most = 0, 200 + 4 * math.max(tonumber(ARGV[7]), scan)
local unread_found, quiet_count, quiet_chosen = 0, 0, {}
while unread_found < scan and looked < most and not (allow_go_on and #chosen >= want) do
  if stopped then
    if #chosen >= want then break end
    allow_go_on, stopped = true, false
  end
  local batch = {}
  local size = allow_go_on and want - #chosen + 4 or scan - unread_found + 4
  while #batch < size and looked + #batch < most do
    local raise, level, slot, class = next_candidate()
    if not raise then break end
    -- Under the user's mute floor: not unread for them (read_model/ mute_floor).
    if level >= view.floor then batch[#batch + 1] = {slot = slot, class = class, raise = tonumber(raise)}
    else looked = looked + 1 end
  end
  if #batch == 0 and not stopped then break end
  if #batch > 0 then
    looked = looked + #batch
    local slots = {}
    for i, candidate in ipairs(batch) do slots[i] = candidate.slot end
    local own, snoozed, expiries = batch_state(user, view, slots, all_gone)
    local unread = {}
    for i, candidate in ipairs(batch) do
      local expired = gone[candidate.slot] or (expiries[i] and tonumber(expiries[i]) <= NOW)
      if unread_found < scan and not expired
         and not read_by(marks, candidate.class, candidate.raise, own[i] or nil, (snoozed[i] or false) ~= false) then
        unread_found = unread_found + 1
        unread[#unread + 1] = candidate.slot
        if #chosen < want then chosen[#chosen + 1] = candidate.slot end
      end
    end
    for _, i in ipairs(quiet_positions(seen, unread, budget)) do
      quiet_count = quiet_count + 1
      local position = i + unread_found - #unread
      if position <= want then quiet_chosen[#quiet_chosen + 1] = position end
    end
  end
end
append(reply, {quiet_count, table.concat(quiet_chosen, ' ')})

if #chosen == 0 then return reply end
local changed = redis.call('ZMSCORE', KEYS[K.changes], unpack(chosen))
local items = {slot = chosen, cursor = {}, read = {}, changed = {}, snooze = {}}
for i, slot in ipairs(chosen) do
  items.cursor[i] = changed[i] and text(tonumber(changed[i])) or slot
  items.read[i], items.changed[i], items.snooze[i] = false, changed[i] ~= false, false
end
return append_items(reply, items)
