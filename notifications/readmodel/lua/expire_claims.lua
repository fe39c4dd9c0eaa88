-- Let go of one warehouse's claims held too long with no progress (SPEC 17).
-- Preludes: read_model
-- KEYS[1..23] the warehouse (read_model/01_layout.lua)
-- KEYS[24] the claims index (notifications.keys.claims: notification id -> ms when due)
-- ARGV[1] now   ARGV[2] read at most this many due entries
-- ARGV[3] JSON {type code: claim timeout ms} of the types whose claims expire
-- A due entry is taken out of the index (once, whoever runs this). If its alert is live and
-- still claimed by someone, of a type whose claims expire: when the claim or an action run
-- since (the prelude's claim_clock) is less than the timeout ago, it is due again then;
-- otherwise the claim is let go (the prelude's expire_claim). Entries of alerts open,
-- resolved or gone are dropped.
-- Returns {entries read, {id, holder id, cursor, content JSON, state JSON, route}, ...}: the
-- claims let go.

local CLAIMS = FIRST_OWN
local timeouts = cjson.decode(ARGV[3])
local due = redis.call('ZRANGEBYSCORE', KEYS[CLAIMS], '-inf', NOW, 'LIMIT', 0, tonumber(ARGV[2]))
local reply = {#due}

for _, id in ipairs(due) do
  redis.call('ZREM', KEYS[CLAIMS], id)
  local slot = redis.call('HGET', KEYS[K.ids], id)
  if slot and live(slot) then
    local state = state_of(slot)
    local timeout = timeouts[content_of(slot).message_type]
    if state.status == 'claimed' and timeout then
      local until_ms = claim_clock(slot, state) + timeout
      if until_ms > NOW then
        redis.call('ZADD', KEYS[CLAIMS], until_ms, id)
      else
        local holder = state.claimed_by.id
        local cursor = expire_claim(slot, state, id)
        reply[#reply + 1] = {id, holder, cursor, redis.call('HGET', KEYS[K.notes], slot),
                             redis.call('HGET', KEYS[K.states], slot),
                             redis.call('HGET', KEYS[K.routes], slot) or id}
      end
    end
  end
end
return reply
