-- Deletes a chat nobody has touched since a cutoff (re-checked here: the activity index
-- that nominated it is written outside this chat's slot and may lag). A direct chat keeps its
-- sequence, so that its ids go on if the pair opens it again (see leave.lua); without meta
-- the kind is unknown, so a vanished chat keeps it too (the orphan sweep removes a
-- sequence nobody can use again, messaging.cleanup).
-- KEYS[1] meta (hash), KEYS[2] members (zset user -> seen id), KEYS[3] joined (hash),
-- KEYS[4] msgs (zset id -> JSON), KEYS[5] seq (string)       -- messaging.keys.chat_keys()
-- ARGV[1] cutoff in ms
-- Returns {'active', last activity ms} | {'gone'} (no such chat) |
-- {'deleted', membership version, {member ids}}.
local last = redis.call('HGET', KEYS[1], 'last_ms')
if not last then
  redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4])
  return {'gone'}
end
if tonumber(last) >= tonumber(ARGV[1]) then
  return {'active', last}
end
local members = redis.call('ZRANGE', KEYS[2], 0, -1)
local ver = redis.call('HGET', KEYS[1], 'mver') or '0'
if redis.call('HGET', KEYS[1], 'kind') == 'direct' then
  redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4])
else
  redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5])
end
return {'deleted', ver, members}
