-- Forget a deleted user's read state in one warehouse: their fields in the hashes the read
-- model shares with other users (their own keys are removed with UNLINK by the caller), and
-- their snoozes (bounded by how many they snoozed). Helpers come from read_model.lua.
--
-- KEYS[1] watermarks hash (user id -> mark-all cursor; "v:<user id>" -> read version)
-- KEYS[2] readopen hash ("<user id>" -> " <class>:<severity> ..." and
--         "<user id>:<class>:<severity>" -> count)
-- KEYS[3] snoozes zset   KEYS[4] snoozers hash ("u:<user id>" -> the slots they snoozed)
-- ARGV[1] the user id
-- Returns how many fields were removed.

local uid = ARGV[1]
local removed = redis.call('HDEL', KEYS[1], uid, 'v:' .. uid)
local index = redis.call('HGET', KEYS[2], uid)
if index then
  for head in string.gmatch(index, '%S+') do
    removed = removed + redis.call('HDEL', KEYS[2], uid .. ':' .. head)
  end
  removed = removed + redis.call('HDEL', KEYS[2], uid)
end
local snoozed = redis.call('HGET', KEYS[4], 'u:' .. uid)
if snoozed then
  for slot in string.gmatch(snoozed, '%S+') do
    removed = removed + redis.call('ZREM', KEYS[3], uid .. ':' .. slot)
    remove_word(KEYS[4], slot, uid)
  end
  redis.call('HDEL', KEYS[4], 'u:' .. uid)
end
return removed
