-- Creates a group chat with its members and sends its first message, atomically.
-- KEYS[1] meta (hash), KEYS[2] members (zset user -> seen id), KEYS[3] joined (hash),
-- KEYS[4] msgs (zset id -> JSON), KEYS[5] seq (string)       -- messaging.keys.chat_keys()
-- ARGV[1] now in ms, ARGV[2] creator's user id, ARGV[3] first message body,
-- ARGV[4..] member user ids (the creator among them)
-- Returns false if the (random) id is taken, else {membership version, first message JSON}.
if redis.call('EXISTS', KEYS[1]) == 1 then
  return false
end
local now = tonumber(ARGV[1])
local creator = ARGV[2]
-- Membership versions order joins and leaves for the per-user chat indexes; they start
-- from the clock so that a chat re-created under the same id (a direct chat) continues
-- above the versions of its earlier life.
local ver = now * 1000
for i = 4, #ARGV do
  redis.call('ZADD', KEYS[2], 0, ARGV[i])
  redis.call('HSET', KEYS[3], ARGV[i], 0)
end
local id = redis.call('INCR', KEYS[5])
local msg = cjson.encode({id = id, sender = tonumber(creator), body = ARGV[3], ts = now})
redis.call('ZADD', KEYS[4], id, msg)
-- The creator has seen their own first message; the others have not.
redis.call('ZADD', KEYS[2], 'XX', id, creator)
redis.call('HSET', KEYS[1], 'kind', 'group', 'creator', creator,
  'created_ms', ARGV[1], 'last_ms', ARGV[1], 'mver', string.format('%.0f', ver), 'last', msg)
return {ver, msg}
