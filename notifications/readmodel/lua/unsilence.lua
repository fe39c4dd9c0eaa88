-- Wake what a planned silence held back, a bounded batch at a time (SPEC 17): the silence ended
-- or was deleted. Each of its alerts still open and silenced by it is raised like a new alert:
-- a new raise cursor (unread for everyone who sees it), back in the open index, an event to
-- open streams, history `unsilenced`, and its escalation due again after its type's delay.
-- Entries of alerts claimed, resolved, gone or held back by a later silence just go.
-- Preludes: read_model
-- KEYS[1..23] the warehouse (read_model/01_layout.lua)
-- ARGV[1] now   ARGV[2] silence id   ARGV[3] most entries to take in this call
-- ARGV[4] JSON {type code: escalation delay ms} of the types that escalate
-- ARGV[5] report retention, ms
-- Returns {entries taken, entries left (0 or 1: whether another call is needed),
--          {id, content JSON, route}, ...} per alert woken.

local silence, most = ARGV[2], tonumber(ARGV[3])
local delays = cjson.decode(ARGV[4])
local prefix = silence .. ':'
local taken = redis.call('ZRANGEBYLEX', KEYS[K.silenced], '[' .. prefix, '(' .. silence .. ';',
                         'LIMIT', 0, most)
local reply = {#taken, 0}
if #taken == 0 then return reply end
redis.call('ZREM', KEYS[K.silenced], unpack(taken))
local woken = {}
for _, entry in ipairs(taken) do
  local slot = string.sub(entry, #prefix + 1)
  if live(slot) then
    local state = state_of(slot)
    if state.status == 'open' and state.silenced and tostring(state.silence) == silence then
      state.silenced, state.silence = nil, nil
      change(slot, state, 'unsilenced', cjson.null, {raise = true})
      woken[#woken + 1] = slot
      report_reached(slot, ARGV[5])
      local content = redis.call('HGET', KEYS[K.notes], slot)
      local delay = delays[cjson.decode(content).message_type]
      if delay then redis.call('ZADD', KEYS[K.escalations], NOW + delay, slot) end
      local route = redis.call('HGET', KEYS[K.routes], slot) or ''
      reply[#reply + 1] = {string.match(route, '^(%S+)') or '', content, route}
    end
  end
end
-- Delivered like new alerts: they count against the noise budget (the log read once).
noise_raise_all(woken)
if #taken == most then
  local more = redis.call('ZRANGEBYLEX', KEYS[K.silenced], '[' .. prefix, '(' .. silence .. ';', 'LIMIT', 0, 1)
  reply[2] = #more
end
return reply
