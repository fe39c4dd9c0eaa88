-- A user's unread summary of a warehouse (GET /api/v1/notifications/unread/): the unread count,
-- by severity, and the newest unread (newest raised first).
-- Preludes: read_model
-- KEYS[1..20] the warehouse (read_model.lua)   KEYS[21..] the inboxes the user sees
-- ARGV[1] now   ARGV[2] user id
-- ARGV[3] most expired but not yet swept notifications looked at to leave them out of counts
-- ARGV[4..6] the client's If-None-Match, as for list.lua
-- ARGV[7] how many of the newest unread
-- Returns the view head (read_model.lua view_head), then ITEM fields per notification; or the
--          view head alone with "not modified".

local user = ARGV[2]
local unchanged, version = check_etag(user, ARGV[4], ARGV[5], ARGV[6])
if unchanged then return unchanged end

local marks = marks_of(user)
local seen, class_list = classes_seen(FIRST_OWN)
local counts, above = unread_counts(user, marks, seen, class_list, tonumber(ARGV[3]))
local reply = view_head('summary', counts, version)

-- Newest raised first: each (class, severity) of the open index from the top down to the
-- watermark, merged, and the ones the user woke at or below it (SPEC 13); skipping read or
-- expired ones. At most 200 + 4 x the size entries looked at.
local want = tonumber(ARGV[7])
local chunk = want + 4
local lists = {}
for _, class in ipairs(class_list) do
  local from = pad(watermark_in(marks, class) + 1)
  for level = 0, 2 do
    local head = class .. ':' .. level
    -- The range unread_counts counted (no writes since): none there, nothing to read.
    if (above[head] or 1) > 0 then
      local bottom = '[' .. head .. ':' .. from
      lists[#lists + 1] = pager(function(top)
        return redis.call('ZREVRANGEBYLEX', KEYS[K.open], top, bottom, 'LIMIT', 0, chunk)
      end, '(' .. head .. ';', chunk)
    end
  end
end
-- Woken ones under the watermark of their class, open and unread: one more list, by raise.
local woken = {buf = {}, pos = 1, done = true}
for _, slot in ipairs(words(redis.call('HGET', KEYS[K.users], 'w:' .. user))) do
  local place = redis.call('HGET', KEYS[K.places], slot)
  if place and is_open(slot) then
    local class, _, raise = place_parts(place)
    if seen[class] and raise <= watermark_in(marks, class) then
      woken.buf[#woken.buf + 1] = place .. ':' .. slot
    end
  end
end
table.sort(woken.buf, function(x, y) return string.match(x, ':(%d+):%d+$') > string.match(y, ':(%d+):%d+$') end)
lists[#lists + 1] = woken

local looked = 0
while want > 0 and looked < 200 + 4 * tonumber(ARGV[7]) do
  local best, best_raise, best_list
  for _, list in ipairs(lists) do
    local member = head_of(list)
    if member then
      local raise = string.match(member, ':(%d+):%d+$')
      if not best_raise or raise > best_raise then best, best_raise, best_list = member, raise, list end
    end
  end
  if not best then break end
  best_list.pos = best_list.pos + 1
  looked = looked + 1
  local slot = string.match(best, '(%d+)$')
  local class = string.match(best, '^(.-):%d:%d+:%d+$')
  if live(slot) and not is_read(user, slot, marks, class, tonumber(best_raise)) then
    append(reply, item_of(slot, nil, false, user))
    want = want - 1
  end
end
return reply
