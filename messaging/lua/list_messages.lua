-- A page of a chat's stored messages for one member (read only: seen ids do not change).
-- KEYS[1] meta (hash), KEYS[2] members (zset user -> seen id), KEYS[3] joined (hash),
-- KEYS[4] msgs (zset id -> JSON), KEYS[5] seq (string)       -- messaging.keys.chat_keys()
-- ARGV[1] the member's user id, ARGV[2] return messages after this id, ARGV[3] page size
-- Returns false if they are not a member (or there is no such chat), else the JSON of up to
-- ARGV[3] messages, oldest first; never one sent before the member joined.
if not redis.call('ZSCORE', KEYS[2], ARGV[1]) then
  return false
end
local after = math.max(tonumber(ARGV[2]), tonumber(redis.call('HGET', KEYS[3], ARGV[1]) or '0'))
return redis.call('ZRANGE', KEYS[4], '(' .. after, '+inf', 'BYSCORE', 'LIMIT', 0,
  tonumber(ARGV[3]))
