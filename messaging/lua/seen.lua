-- Seen ids and the messages every member has seen (messaging/store.py), put before the scripts
-- that move a member's seen id or remove a member.
-- KEYS[...] none of its own: its functions take the script's members (zset user -> seen id)
-- and msgs (zset id -> JSON) keys.
-- ARGV: none of its own.
-- Returns nothing itself: it defines
--   drop_seen_by_all(members_key, msgs_key): removes the messages every member has seen;
--   advance_seen(members_key, msgs_key, member, seen, up_to): the member's seen id moved up to
--   `up_to` (never backwards), then drop_seen_by_all; returns the seen id after.
local function drop_seen_by_all(members_key, msgs_key)
  local lowest = redis.call('ZRANGE', members_key, 0, 0, 'WITHSCORES')
  redis.call('ZREMRANGEBYSCORE', msgs_key, '-inf', lowest[2])
end

local function advance_seen(members_key, msgs_key, member, seen, up_to)
  if up_to <= seen then
    return seen
  end
  redis.call('ZADD', members_key, up_to, member)
  drop_seen_by_all(members_key, msgs_key)
  return up_to
end
