-- The alerts a user snoozed that they still see, earliest wake first (GET .../snoozed/).
-- Bounded by how many the user snoozed (and ARGV[3]).
-- Preludes: read_model
-- KEYS[1..23] the warehouse (read_model/01_layout.lua)   KEYS[24..] the inboxes the user sees
-- ARGV[1] now   ARGV[2] user id   ARGV[3] how many at most
-- Returns ITEM fields per notification (read 1).

local user = ARGV[2]
local found = {}
for _, slot in ipairs(words(redis.call('HGET', KEYS[K.users], 's:' .. user))) do
  local wakes = snooze_of(user, slot)
  if wakes and live(slot) and visible(slot, FIRST_OWN) then found[#found + 1] = {tonumber(wakes), slot} end
end
table.sort(found, function(x, y) return x[1] < y[1] end)
local reply = {}
for i = 1, math.min(#found, tonumber(ARGV[3])) do append(reply, item_of(found[i][2], nil, true, user)) end
return reply
