-- Redis in Action's fetch_pending_messages for one chat: the messages after a member's seen
-- id, then their seen id advances and messages every member has seen are removed.
-- KEYS[1] members (zset user -> seen id), KEYS[2] msgs (zset id -> JSON), KEYS[3] seq
-- (string)                                                 -- messaging.keys.pending_keys()
-- ARGV[1] the member's user id, ARGV[2] the most messages to return
-- Returns false if they are not a member (or there is no such chat), else {seen id after
-- this call, {JSON, id, JSON, id, ...}}: the messages as a flat list, oldest first.
-- Preludes: seen
local seen = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not seen then
  return false
end
local limit = tonumber(ARGV[2])
local found = redis.call('ZRANGE', KEYS[2], '(' .. seen, '+inf', 'BYSCORE',
  'LIMIT', 0, limit, 'WITHSCORES')
local up_to
if #found / 2 >= limit then
  -- Capped: advance only to what was returned; the next fetch continues from there.
  up_to = tonumber(found[#found])
else
  up_to = tonumber(redis.call('GET', KEYS[3]) or '0')
end
seen = advance_seen(KEYS[1], KEYS[2], ARGV[1], tonumber(seen), up_to)
return {string.format('%.0f', seen), found}
