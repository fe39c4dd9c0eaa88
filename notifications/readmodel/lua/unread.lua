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
--          newest unread that came quietly (space-separated), then ITEM fields per
--          notification; or the view head alone with "not modified".

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

-- The candidates, newest raised first (read_model/ unread_candidates). Counting the quiet ones
-- past the newest `want` does not go on into the open index; the candidates go on only to find
-- the `want`.
local candidates = unread_candidates(view, seen, class_list, states, want + 4, scan <= want)

-- In batches: the candidates' read state in one read each (their own fields, their snoozes when
-- the user has some, their expiry when some expired and are not swept yet). At most 200 + 4 x
-- the size candidates looked at.
local chosen = {}
local looked, most = 0, 200 + 4 * math.max(tonumber(ARGV[7]), scan)
local unread_found, quiet_count, quiet_chosen = 0, 0, {}
local mute = view.floor
while unread_found < scan and looked < most and not (candidates.allow_go_on and #chosen >= want) do
  if candidates.stopped then
    if #chosen >= want then break end
    candidates.allow_go_on, candidates.stopped = true, false
  end
  -- The batch's candidates: slots[i] of class classes[i], raised at raises[i].
  local slots, classes, raises, taken = {}, {}, {}, 0
  local size = candidates.allow_go_on and want - #chosen + 4 or scan - unread_found + 4
  while taken < size and looked + taken < most do
    local raise, level, slot, class = candidates.next()
    if not raise then break end
    -- Under the user's mute floor: not unread for them (read_model/ mute_floor).
    if level >= mute then
      taken = taken + 1
      slots[taken], classes[taken], raises[taken] = slot, class, raise
    else looked = looked + 1 end
  end
  if taken == 0 and not candidates.stopped then break end
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
