-- Send the due reminders, and hand over the due e-mails, of one warehouse's open alerts (SPEC 14).
-- Preludes: read_model
-- KEYS[1..23] the warehouse (read_model/; the reminders zset: "r<n>:<id>" reminder number
--          n + 1, "e:<id>" the e-mail when nobody claims it -> ms when due)
-- ARGV[1] now   ARGV[2] read at most this many due entries
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

local lease = tonumber(ARGV[3])
local types = cjson.decode(ARGV[4])
local due = redis.call('ZRANGEBYSCORE', KEYS[K.reminders], '-inf', NOW, 'LIMIT', 0, tonumber(ARGV[2]))
local reply = {#due}

for _, entry in ipairs(due) do
  local kind, sent, id = string.match(entry, '^(%a)(%d*):(.+)$')
  local slot = id and redis.call('HGET', KEYS[K.ids], id)
  if not (slot and live(slot) and redis.call('HEXISTS', KEYS[K.flags], slot) == 1 and is_open(slot)) then
    redis.call('ZREM', KEYS[K.reminders], entry)
  elseif kind == 'e' then
    redis.call('ZADD', KEYS[K.reminders], NOW + lease, entry)
    reply[#reply + 1] = {'e', id, redis.call('HGET', KEYS[K.notes], slot),
                         redis.call('HGET', KEYS[K.states], slot) or false,
                         redis.call('HGET', KEYS[K.routes], slot) or ''}
  else
    redis.call('ZREM', KEYS[K.reminders], entry)
    local content = redis.call('HGET', KEYS[K.notes], slot)
    local rule = types[cjson.decode(content).message_type]
    local count_sent = tonumber(sent) + 1
    if rule and count_sent < rule[2] then
      redis.call('ZADD', KEYS[K.reminders], NOW + rule[1], 'r' .. count_sent .. ':' .. id)
    end
    record(slot, {event = 'reminded', at = NOW, by = cjson.null})
    local route = redis.call('HGET', KEYS[K.routes], slot) or id
    local snoozers = {}
    for _, user in ipairs(who(slot)) do
      if snooze_of(user, slot) then snoozers[#snoozers + 1] = user end
    end
    tell_streams('reminder ' .. cursor_of(slot) .. ' ' .. route .. '|'
                 .. (#snoozers > 0 and (' ' .. table.concat(snoozers, ' ')) or ''))
    reply[#reply + 1] = {'r', id, content, redis.call('HGET', KEYS[K.states], slot) or false, route}
  end
end
return reply
