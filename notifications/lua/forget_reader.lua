-- Forget a deleted user's read state in one warehouse: their fields in the hashes the read
-- model shares with other users (their own keys are removed with UNLINK by the caller).
--
-- KEYS[1] watermarks hash (user id -> mark-all cursor; "v:<user id>" -> read version)
-- KEYS[2] readopen hash ("<user id>" -> " <class>:<severity> ..." and
--         "<user id>:<class>:<severity>" -> count)
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
return removed
