-- Marks a member's messages seen up to an id (never backwards) and cleans up what every
-- member has now seen.
-- KEYS[1] meta (hash), KEYS[2] members (zset user -> seen id), KEYS[3] joined (hash),
-- KEYS[4] msgs (zset id -> JSON), KEYS[5] seq (string)       -- messaging.keys.chat_keys()
-- ARGV[1] the member's user id, ARGV[2] the message id read up to
-- Returns false if they are not a member (or there is no such chat), else
-- {'ok', unread count} | {'beyond', last message id} (up_to names no message yet).
-- Preludes: seen
local seen = redis.call('ZSCORE', KEYS[2], ARGV[1])
if not seen then
  return false
end
local up_to = tonumber(ARGV[2])
local last_id = tonumber(redis.call('GET', KEYS[5]) or '0')
if up_to > last_id then
  return {'beyond', last_id}
end
seen = advance_seen(KEYS[2], KEYS[4], ARGV[1], tonumber(seen), up_to)
return {'ok', redis.call('ZCOUNT', KEYS[4], '(' .. seen, '+inf')}
