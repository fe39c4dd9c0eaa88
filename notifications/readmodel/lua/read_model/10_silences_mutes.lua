-- --- Silences and mutes ------------------------------------------------------------------------
-- SPEC 17. A planned silence holds an alert back when it is published or raised again: it is
-- stored and listed with `silenced` in its state and the flag letter 's' (out of the open index,
-- so no tallies, not unread for anyone, not reminded or escalated), and listed in `silenced`
-- under its silence until that ends (unsilence.lua). A mute is read at poll time (mute_floor,
-- in user_view and unread_counts): no tallies to fix when it ends.

-- Holds back `slot` (already out of the open index) under silence `silence`: its state says so.
local function hold_back(slot, state, silence, type_code, retention)
  state.silenced = true
  state.silence = tonumber(silence)
  redis.call('ZADD', KEYS[K.silenced], 0, silence .. ':' .. slot)
  redis.call('ZREM', KEYS[K.escalations], slot)
  record(slot, {event = 'silenced', at = NOW, by = cjson.null, silence = tonumber(silence)})
  count(type_code, 'silenced', retention)
end
