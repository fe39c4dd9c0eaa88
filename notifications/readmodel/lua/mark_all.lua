-- "Mark all read" for a user (POST .../read/ with all): moves their watermark of every class
-- they see now to the warehouse's sequence, so it covers exactly what they can see now, however
-- much that is; a class they see later (a role joined) keeps its own (SPEC 11). Bounded by the
-- classes they see, not by what those hold.
-- Preludes: read_model
-- KEYS[1..23] the warehouse (read_model/01_layout.lua)   KEYS[24..] the inboxes the user sees
-- ARGV[1] now   ARGV[2] user id
-- ARGV[3] most expired but not yet swept notifications looked at to leave them out of counts
-- Returns the view head (read_model/ view_head: nothing unread) with how many were marked.

local user = ARGV[2]
local view = user_view(user)
local marks = view.marks
local seen, class_list = classes_seen(FIRST_OWN)
local states = open_states(class_list)
local counts = unread_counts(user, view, seen, class_list, states, tonumber(ARGV[3]))
local marked = counts[1] + counts[2] + counts[3]
-- One watermark per class the user sees now; classes that are gone are dropped, so the field
-- stays as small as what the user can see.
local sequence = tonumber(view.version[1])
local others = {}
for class in pairs(marks) do
  if class ~= '*' and not seen[class] then others[#others + 1] = class end
end
table.sort(others)
if #others > 0 then
  local exists = redis.call('HMGET', KEYS[K.classes], unpack(others))
  for i, class in ipairs(others) do
    if not exists[i] then marks[class] = nil end
  end
end
for _, class in ipairs(class_list) do marks[class] = sequence end
save_marks(user, marks)
-- Every open one of those classes is read now (what the user woke before too: a later wake is
-- not), and the user is one whose watermark a change of them must look at.
local tallies = view.read_counts
for head in pairs(tallies) do
  if seen[string.match(head, '^(.-):%d$')] then tallies[head] = nil end
end
local holders = {}
for _, class in ipairs(class_list) do
  for level = 0, 2 do tallies[class .. ':' .. level] = states[class].counts[level + 1] end
  holders[#holders + 1] = 'm:' .. class
end
local tallied = format_counts(tallies)
if tallied == '' then redis.call('HDEL', KEYS[K.users], 'r:' .. user)
else redis.call('HSET', KEYS[K.users], 'r:' .. user, tallied) end
if #holders > 0 then
  local lists, changed = redis.call('HMGET', KEYS[K.classes], unpack(holders)), {}
  for i, field in ipairs(holders) do
    if not has_word(lists[i], user) then
      changed[#changed + 1] = field
      changed[#changed + 1] = (lists[i] or '') .. ' ' .. user
    end
  end
  if #changed > 0 then redis.call('HSET', KEYS[K.classes], unpack(changed)) end
end
local still_woken = {}
for _, slot in ipairs(view.woken) do
  if not seen[(place_of(slot))] then still_woken[#still_woken + 1] = slot end
end
if #still_woken == 0 then redis.call('HDEL', KEYS[K.users], 'w:' .. user)
else redis.call('HSET', KEYS[K.users], 'w:' .. user, ' ' .. table.concat(still_woken, ' ')) end
redis.call('HINCRBY', KEYS[K.users], 'v:' .. user, 1)
local reply = view_head('marked', {0, 0, 0}, view_version(user))
reply[#reply + 1] = marked
return reply
