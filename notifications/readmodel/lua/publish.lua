-- Deliver one notification into every subscriber inbox of (warehouse, message type), atomically,
-- and open its lifecycle and its place in the read model.
--
-- The caller passes the subscriber list it has cached together with that list's token, so every
-- inbox key can be declared in KEYS. If the set changed since (token differs), nothing is
-- written and the current token and members are returned for the caller to retry with. Every
-- mirrored pair has a token, an empty one too: no token means the subscription mirror lost the
-- pair (Redis emptied or restarted empty, the key evicted), never "nobody subscribed".
-- Preludes: idempotency, version_check, read_model
-- KEYS[1..23] the warehouse (read_model/01_layout.lua)
-- KEYS[24] subscriber set   KEYS[25] subscriber set token
-- KEYS[26] the flapping records (notifications.keys.flaps)
-- KEYS[27..] inbox of each subscriber (notifications.keys.inbox: "<prefix>:inbox:<id>")
-- ARGV[1] now (the notification's created_at), ms since the epoch
-- ARGV[2] token of the caller's subscriber list ("" when it has none cached)
-- ARGV[3] notification id (UUID)   ARGV[4] content JSON   ARGV[5] expires at, ms
-- ARGV[6] severity digit (0 info, 1 warning, 2 critical)
-- ARGV[7] escalation due, ms ("" never)   ARGV[8] message type code
-- ARGV[9] report retention, ms
-- ARGV[10] the route's class (notifications.readmodel.route_class of the subscriber ids)
-- ARGV[11] the id of the planned silence that covers it ("" none): then it is held back
--          (read_model/ hold_back: stored and listed, unread for nobody, not escalated)
-- ARGV[12] the alert key ("" none): counted for the noise report (read_model/ report_key)
--          and followed for flapping   ARGV[13] FLAP_MAX (0: nothing flaps)
-- ARGV[14] FLAP_WINDOW_SECONDS, in ms
-- ARGV[15] the subscriber ids of KEYS[27..], in that order, space-separated: the route (cutting
--          them out of the inbox names here was a fifth of this script's own work)
-- Returns {1, cursor} (cursor "0" when there is nobody to deliver to and nothing to escalate),
--      or {2, cursor, id, inboxes, created_at ms} when the key flaps (SPEC 17, the prelude's
--      "Flapping"): nothing new was stored; the latest alert of the key (`id`, in `inboxes`
--      inboxes, published at `created_at`) was raised again quietly at `cursor`,
--      or {0, current token, member, member, ...} when the caller's list is stale,
--      or {-1} when the pair is not mirrored: nothing written, the caller rebuilds it first,
--      or {-2} when the directory the caller resolved the type and warehouse from moved on.
-- Publishes "<cursor> <id> <subscriber>..." on the warehouse's events channel.

local prior = idempotency_prior()
if prior then return prior end
if directory_moved() then return {-2} end

local SUBSCRIBERS, TOKEN, FLAPS = FIRST_OWN, FIRST_OWN + 1, FIRST_OWN + 2
local FIRST_INBOX = FIRST_OWN + 3
local token = redis.call('GET', KEYS[TOKEN])
if not token then return {-1} end
if token ~= ARGV[2] then
  local reply = {0, token}
  for _, member in ipairs(redis.call('SMEMBERS', KEYS[SUBSCRIBERS])) do reply[#reply + 1] = member end
  return reply
end

-- Nobody to deliver to: nothing to store, unless it is due for escalation, which delivers it to
-- the escalation role however many subscribe (SPEC 11); then it is stored in no inbox yet.
if #KEYS < FIRST_INBOX and ARGV[7] == '' then return idempotency_store({1, '0'}) end

-- Redis does not roll back a script that fails half-way, so check the warehouse keys this
-- script writes before the first write, and undo the inbox writes if one inbox is not a sorted
-- set: either every inbox gets the notification or none does (without a TYPE per inbox).
local expected = {seq = 'string', notes = 'hash', ids = 'hash', routes = 'hash', expiry = 'zset',
                  flags = 'hash', escalations = 'zset', report = 'hash', classes = 'hash',
                  places = 'hash', open = 'zset'}
for name, wanted in pairs(expected) do
  local kind = redis.call('TYPE', KEYS[K[name]])['ok']
  if kind ~= 'none' and kind ~= wanted then
    return redis.error_reply('WRONGTYPE ' .. KEYS[K[name]] .. ' is a ' .. kind .. ', not a '
                             .. wanted .. '; nothing was delivered')
  end
end

-- A flapping key raises its latest alert again instead of making a new one.
local alert_key, flap_field, flap = ARGV[12], nil, nil
local window = tonumber(ARGV[14])
if alert_key ~= '' then
  flap_field = ARGV[8] .. '|' .. alert_key
  report_key(ARGV[8], alert_key, ARGV[9])
  local latest
  latest, flap = flapping_into(KEYS[FLAPS], flap_field, tonumber(ARGV[13]), window)
  if latest then
    local cursor = flap_fold(latest, ARGV[8], ARGV[9])
    local _, inboxes = string.gsub(redis.call('HGET', KEYS[K.routes], latest) or '', '%S+', '')
    return idempotency_store({2, cursor, flap.latest, math.max(inboxes - 1, 0),
                              content_of(latest).created_at_ms})
  end
end

local last = tonumber(redis.call('GET', KEYS[K.seq]) or '0')
local c = text(math.max(last + 1, NOW * 1024))
for i = FIRST_INBOX, #KEYS do
  local done = redis.pcall('ZADD', KEYS[i], c, c)
  if type(done) == 'table' and done.err then
    for j = FIRST_INBOX, i - 1 do redis.call('ZREM', KEYS[j], c) end
    return redis.error_reply(done.err .. ' (' .. KEYS[i] .. '); nothing was delivered')
  end
end
take_cursor()

local route = ARGV[15]
redis.call('HSET', KEYS[K.notes], c, ARGV[4])
redis.call('HSET', KEYS[K.ids], ARGV[3], c)
redis.call('HSET', KEYS[K.routes], c, ARGV[3] .. ' ' .. route)
redis.call('ZADD', KEYS[K.expiry], ARGV[5], c)
-- The alert lifecycle: open with its severity, due for escalation, counted for the report.
redis.call('HSET', KEYS[K.flags], c, 'o' .. ARGV[6])
if ARGV[7] ~= '' then redis.call('ZADD', KEYS[K.escalations], ARGV[7], c) end
count(ARGV[8], 'published', ARGV[9])
-- The read model: its class (recorded once per new set of inboxes), its place, open.
local class = ARGV[10]
enter_class(class, route)
local place = make_place(class, ARGV[6], tonumber(c))
redis.call('HSET', KEYS[K.places], c, place)
if ARGV[11] and ARGV[11] ~= '' then
  local state = state_of(c)
  hold_back(c, state, ARGV[11], ARGV[8], ARGV[9])
  -- Listed as changed (its state read with it): at its own cursor, no new one.
  redis.call('ZADD', KEYS[K.changes], c, c)
  redis.call('HSET', KEYS[K.states], c, cjson.encode(state))
  redis.call('HSET', KEYS[K.flags], c, flag_of(state))
else
  open_enter(place, c)
  noise_raise(c, place)
  report_reached(c, ARGV[9], place)
end
if flap then flap_made(KEYS[FLAPS], flap_field, flap, ARGV[3], window) end
-- Tell open streams in the same script that delivers: no event without a delivery.
tell_streams(c .. ' ' .. ARGV[3] .. ' ' .. route)
return idempotency_store({1, c})
