-- "Mark all read" for a user (POST .../read/ with all): moves their watermark of every class
-- they see now to the warehouse's sequence, so it covers exactly what they can see now, however
-- much that is; a class they see later (a role joined) keeps its own (SPEC 11).
-- Preludes: read_model
-- KEYS[1..20] the warehouse (read_model.lua)   KEYS[21..] the inboxes the user sees
-- ARGV[1] now   ARGV[2] user id
-- ARGV[3] most expired but not yet swept notifications looked at to leave them out of counts
-- Returns the view head (read_model.lua view_head: nothing unread) with how many were marked.

local user = ARGV[2]
local marks = marks_of(user)
local seen, class_list = classes_seen(FIRST_OWN)
local counts = unread_counts(user, marks, seen, class_list, tonumber(ARGV[3]))
local marked = counts[1] + counts[2] + counts[3]
-- One watermark per class the user sees now; classes that are gone are dropped, so the field
-- stays as small as what the user can see.
local sequence = tonumber(redis.call('GET', KEYS[K.seq]) or '0')
local others = {}
for class in pairs(marks) do
  if class ~= '*' and not seen[class] then others[#others + 1] = class end
end
if #others > 0 then
  local exists = redis.call('HMGET', KEYS[K.classes], unpack(others))
  for i, class in ipairs(others) do
    if not exists[i] then marks[class] = nil end
  end
end
for _, class in ipairs(class_list) do marks[class] = sequence end
save_marks(user, marks)
-- Everything of those classes is read up to the mark now: their tallies start again, and what
-- the user woke before is covered (a later wake is not).
for _, head in ipairs(words(redis.call('HGET', KEYS[K.users], 'o:' .. user))) do
  if seen[string.match(head, '^(.-):%d$')] then add_tally(user, head, -tonumber(redis.call('HGET', KEYS[K.users], 'o:' .. user .. ':' .. head))) end
end
local still_woken = {}
for _, slot in ipairs(words(redis.call('HGET', KEYS[K.users], 'w:' .. user))) do
  if not seen[(place_of(slot))] then still_woken[#still_woken + 1] = slot end
end
if #still_woken == 0 then redis.call('HDEL', KEYS[K.users], 'w:' .. user)
else redis.call('HSET', KEYS[K.users], 'w:' .. user, ' ' .. table.concat(still_woken, ' ')) end
redis.call('HINCRBY', KEYS[K.users], 'v:' .. user, 1)
local reply = view_head('marked', {0, 0, 0}, view_version(user))
reply[#reply + 1] = marked
return reply
