-- Send the due reminders, and hand over the due e-mails, of one warehouse's open alerts (SPEC 14).
--
-- KEYS[1] reminders zset ("r<n>:<id>": reminder number n + 1, "e:<id>": the e-mail when
--         nobody claims it -> ms when due)
-- KEYS[2] ids hash   KEYS[3] contents hash   KEYS[4] expiry zset   KEYS[5] flags hash
-- KEYS[6] states hash   KEYS[7] history hash   KEYS[8] routes hash   KEYS[9] snoozers hash
-- KEYS[10] changes zset   KEYS[11] cursor sequence (its name gives the events channel)
-- ARGV[1] now, ms since the epoch   ARGV[2] read at most this many due entries
-- ARGV[3] how long an e-mail handed over stays out of the way (its lease), ms
-- ARGV[4] JSON {type code: [reminder interval ms, most reminders]} of the types that remind
-- A due reminder is taken out of the index (once, whoever runs this); if its alert is live and
-- still open it records `reminded` (by null), schedules the next one an interval later while
-- fewer than the most were sent, and PUBLISHes "reminder <cursor> <id> <inbox>...|<snoozer>..."
-- on the warehouse's events channel (notifications/keys.py). A due e-mail of an open alert is
-- due again after its lease, so a caller that dies before writing it to the outbox is followed
-- by another; the caller removes the entry once written (a plain ZREM). Entries of alerts
-- claimed, resolved or gone are dropped.
-- Returns {entries read, {kind, id, content JSON, state JSON or false, route}, ...}: kind "r" a
-- reminder sent, "e" an e-mail to hand over.

local now = tonumber(ARGV[1])
local lease = tonumber(ARGV[3])
local types = cjson.decode(ARGV[4])
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[2]))
local answer = {#due}

for _, entry in ipairs(due) do
  local kind, count, id = string.match(entry, '^(%a)(%d*):(.+)$')
  local slot = id and redis.call('HGET', KEYS[2], id)
  local expires = slot and redis.call('ZSCORE', KEYS[4], slot)
  local flag = slot and redis.call('HGET', KEYS[5], slot)
  local open = expires and tonumber(expires) > now and flag and string.sub(flag, 1, 1) == 'o'
  if not open then
    redis.call('ZREM', KEYS[1], entry)
  elseif kind == 'e' then
    redis.call('ZADD', KEYS[1], now + lease, entry)
    answer[#answer + 1] = {'e', id, redis.call('HGET', KEYS[3], slot),
                           redis.call('HGET', KEYS[6], slot) or false,
                           redis.call('HGET', KEYS[8], slot) or ''}
  else
    redis.call('ZREM', KEYS[1], entry)
    local content = redis.call('HGET', KEYS[3], slot)
    local rule = types[cjson.decode(content).message_type]
    local sent = tonumber(count) + 1
    if rule and sent < rule[2] then
      redis.call('ZADD', KEYS[1], now + rule[1], 'r' .. sent .. ':' .. id)
    end
    local event = cjson.encode({event = 'reminded', at = now, by = cjson.null})
    local before = redis.call('HGET', KEYS[7], slot)
    redis.call('HSET', KEYS[7], slot, before and (before .. ',' .. event) or event)
    local route = redis.call('HGET', KEYS[8], slot) or id
    local changed = redis.call('ZSCORE', KEYS[10], slot)
    local cursor = changed and string.format('%.0f', tonumber(changed)) or slot
    redis.call('PUBLISH', (string.gsub(KEYS[11], ':seq$', ':events')),
               'reminder ' .. cursor .. ' ' .. route .. '|' .. (redis.call('HGET', KEYS[9], slot) or ''))
    answer[#answer + 1] = {'r', id, content, redis.call('HGET', KEYS[6], slot) or false, route}
  end
end
return answer
