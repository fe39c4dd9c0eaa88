-- Forget a deleted user's read state in one warehouse: their fields in the users hash
-- (watermarks, read version, tallies, woken and snoozed lists), their place among the holders
-- of a watermark of each class, and their snoozes, bounded by how many classes they marked
-- and how many they snoozed. Their fields of single notifications (reads) go with those
-- notifications when the sweep finishes them.
-- Preludes: read_model
-- KEYS[1..23] the warehouse (read_model/01_layout.lua)
-- ARGV[1] now   ARGV[2] the user id
-- Returns how many fields were removed.

local user = ARGV[2]
local classes = {}
for class in pairs(marks_of(user)) do classes[#classes + 1] = class end
table.sort(classes)
for _, class in ipairs(classes) do remove_word(KEYS[K.classes], 'm:' .. class, user) end
local removed = redis.call('HDEL', KEYS[K.users], user, 'v:' .. user, 'w:' .. user, 'r:' .. user)
for _, slot in ipairs(words(redis.call('HGET', KEYS[K.users], 's:' .. user))) do
  removed = removed + redis.call('ZREM', KEYS[K.snoozes], user .. ':' .. slot)
end
removed = removed + redis.call('HDEL', KEYS[K.users], 's:' .. user)
return removed
