-- A chat as one member sees it (read only).
-- KEYS[1] meta (hash), KEYS[2] members (zset user -> seen id), KEYS[3] joined (hash),
-- KEYS[4] msgs (zset id -> JSON), KEYS[5] seq (string)       -- messaging.keys.chat_keys()
-- ARGV[1] the member's user id
-- Returns false if they are not a member (or there is no such chat), else
-- {kind, last activity ms, last message JSON or '', joined at id, unread, {member ids}}.
local seen = redis.call('ZSCORE', KEYS[2], ARGV[1])
if not seen then
  return false
end
local meta = redis.call('HMGET', KEYS[1], 'kind', 'last_ms', 'last')
return {
  meta[1], meta[2], meta[3] or '',
  redis.call('HGET', KEYS[3], ARGV[1]) or '0',
  redis.call('ZCOUNT', KEYS[4], '(' .. seen, '+inf'),
  redis.call('ZRANGE', KEYS[2], 0, -1),
}
