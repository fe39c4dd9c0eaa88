-- Removes what is left of a chat that no longer exists (no meta): stray members, joined and
-- messages keys, and its sequence when asked to (a group chat's, which is never reused, or a
-- direct chat's once one of its pair is deleted). A chat with meta is alive: left alone.
-- KEYS[1] meta (hash), KEYS[2] members (zset user -> seen id), KEYS[3] joined (hash),
-- KEYS[4] msgs (zset id -> JSON), KEYS[5] seq (string)       -- messaging.keys.chat_keys()
-- ARGV[1] '1' to remove the sequence too, else '0'
-- Returns the number of keys removed, or -1 when the chat exists.
if redis.call('EXISTS', KEYS[1]) == 1 then
  return -1
end
-- UNLINK: a stray messages set may be big; its memory is freed off the main thread.
local removed = redis.call('UNLINK', KEYS[2], KEYS[3], KEYS[4])
if ARGV[1] == '1' then
  removed = removed + redis.call('UNLINK', KEYS[5])
end
return removed
