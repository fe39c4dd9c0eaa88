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
-- "<raise, 16 digits>:<level>:<slot>" of the list's class, or with ":<class>" after them in the
-- list of woken ones (it has no class). A list gives its entries one at a time (`next()`, nil at
-- its end); `head` is the one it gave that the merge has not taken yet, `raise` its raise (nil:
-- ask `next()` when needed, unless the list `ended`).
local lists = {}
local chunk = want + 4
for _, class in ipairs(class_list) do
  local state, watermark = states[class], watermark_in(marks, class)
  -- An entry is raised above the watermark when it sorts after "<watermark, 16 digits>;".
  local above, rest, at = pad(watermark) .. ';', state.rest, 1
  local list, taken, last = {class = class, watermark = watermark}, 0, nil
  -- The listed ones above the watermark (split only as far as the merge takes them, at their
  -- spaces); when every listed one was above it and the class holds more, it goes on below the
  -- last.
  list.next = function()
    local entry
    while not entry and at <= #rest do
      local space = string.find(rest, ' ', at, true) or #rest + 1
      if space > at then entry = string.sub(rest, at, space - 1) end
      at = space + 1
    end
    if not entry then
      if last and taken == state.listed and taken < open_total(state) then
        list.below = string.sub(last, 1, 16)
      end
      return nil
    end
    if entry < above then return nil end
    taken, last = taken + 1, entry
    return entry
  end
  lists[#lists + 1] = list
end
-- Woken ones under the watermark of their class, open: one more list, by raise.
if #view.woken > 0 then
  local woken, at = {}, 0
  local places = redis.call('HMGET', KEYS[K.places], unpack(view.woken))
  local flags = redis.call('HMGET', KEYS[K.flags], unpack(view.woken))
  for i, slot in ipairs(view.woken) do
    if places[i] and is_open_flag(flags[i]) then
      local class, level, raise = place_parts(places[i])
      if seen[class] and raise <= watermark_in(marks, class) then
        woken[#woken + 1] = newest_entry(raise, level, slot) .. ':' .. class
      end
    end
  end
  table.sort(woken, function(x, y) return x > y end)
  lists[#lists + 1] = {next = function()
    at = at + 1
    return woken[at]
  end}
end

-- A class whose listed ones are used up goes on in its open index, severity by severity.
local function go_on(list)
  local class, below, watermark = list.class, list.below, list.watermark
  list.below = nil
  -- Below the user's mute floor nothing is unread for them: those ranges are not read at all.
  for level = view.floor, 2 do
    local head = class .. ':' .. level
    local top, bottom = '(' .. head .. ':' .. below, '[' .. head .. ':' .. pad(watermark + 1)
    local range = pager(function()
      local found = redis.call('ZREVRANGEBYLEX', KEYS[K.open], top, bottom, 'LIMIT', 0, chunk)
      if #found > 0 then top = '(' .. found[#found] end
      for i, member in ipairs(found) do
        local raise, slot = string.match(member, ':(%d+):(%d+)$')
        found[i] = raise .. ':' .. level .. ':' .. slot
      end
      return found
    end, nil, chunk)
    lists[#lists + 1] = {class = class, next = function()
      local entry = head_of(range)
      if entry then range.pos = range.pos + 1 end
      return entry
    end}
  end
end

-- The next candidate of all lists: raise, level, slot, class; nil when none is left.
-- (A class that goes on adds its lists to `lists`: this same loop reaches them.)
-- Counting the quiet ones past the newest `want` does not go on into the open index: where a
-- class would have to (`stopped`), the candidates end; they go on only to find the `want`.
local allow_go_on, stopped = scan <= want, false
local function next_candidate()
  local best, best_list
  local i, list = 1, lists[1]
  while list do
    local raise = list.raise
    if raise == nil and not list.ended then
      local entry = list.next()
      if entry == nil then
        list.ended = true
      else
        raise = tonumber(string.sub(entry, 1, 16))
        list.head, list.raise = entry, raise
      end
    end
    if not raise and list.below then
      if not allow_go_on then
        stopped = true
        return nil
      end
      go_on(list)
    end
    if raise and (not best or raise > best) then best, best_list = raise, list end
    i = i + 1
    list = lists[i]
  end
  if not best then return nil end
  local entry, class = best_list.head, best_list.class
  best_list.head, best_list.raise = nil, nil
  if not class then
    local level, slot, of = string.match(entry, '^%d+:(%d):(%d+):(.*)$')
    return best, tonumber(level), slot, of
  end
  return best, string.byte(entry, 18) - 48, string.sub(entry, 20), class
end

-- In batches: the candidates' read state in one read each (their own fields, their snoozes when
-- the user has some, their expiry when some expired and are not swept yet). At most 200 + 4 x
-- the size candidates looked at.
local chosen = {}
local looked, most = 0, 200 + 4 * math.max(tonumber(ARGV[7]), scan)
local unread_found, quiet_count, quiet_chosen = 0, 0, {}
local mute = view.floor
while unread_found < scan and looked < most and not (allow_go_on and #chosen >= want) do
  if stopped then
    if #chosen >= want then break end
    allow_go_on, stopped = true, false
  end
  -- The batch's candidates: slots[i] of class classes[i], raised at raises[i].
  local slots, classes, raises, taken = {}, {}, {}, 0
  local size = allow_go_on and want - #chosen + 4 or scan - unread_found + 4
  while taken < size and looked + taken < most do
    local raise, level, slot, class = next_candidate()
    if not raise then break end
    -- Under the user's mute floor: not unread for them (read_model/ mute_floor).
    if level >= mute then
      taken = taken + 1
      slots[taken], classes[taken], raises[taken] = slot, class, raise
    else looked = looked + 1 end
  end
  if taken == 0 and not stopped then break end
  if taken > 0 then
    looked = looked + taken
    local own, snoozed, expiries = batch_state(user, view, slots, all_gone)
    local unread = {}
    for i = 1, taken do
      local slot = slots[i]
      local expired = gone[slot] or (expiries[i] and tonumber(expiries[i]) <= NOW)
      if unread_found < scan and not expired
         and not read_by(marks, classes[i], raises[i], own[i] or nil, (snoozed[i] or false) ~= false) then
        unread_found = unread_found + 1
        unread[#unread + 1] = slot
        if #chosen < want then chosen[#chosen + 1] = slot end
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
local items = {slot = chosen, cursor = {}, read = {}, changed = {}, snoozed = {}}
for i, slot in ipairs(chosen) do
  items.cursor[i] = changed[i] and text(tonumber(changed[i])) or slot
  items.read[i], items.changed[i], items.snoozed[i] = false, changed[i] ~= false, false
end
return append_items(reply, items)
