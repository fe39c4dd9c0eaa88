-- Wake the given snoozes that are still due (beat, SPEC 13): each woken one gets a new cursor,
-- history `woke` by nobody; one whose alert expired just goes (the sweep does the rest).
-- Preludes: read_model
-- KEYS[1..23] the warehouse (read_model/01_layout.lua)
-- ARGV[1] now   ARGV[2..] "<user id>:<slot>" entries the caller read from the snoozes index
-- Returns {how many were woken}.

local woken = 0
for i = 2, #ARGV do
  local due = redis.call('ZSCORE', KEYS[K.snoozes], ARGV[i])
  -- Still due (not woken or snoozed again meanwhile by another call).
  if due and tonumber(due) <= NOW then
    local user, slot = string.match(ARGV[i], '^(%d+):(%d+)$')
    if live(slot) then
      wake(user, slot, cjson.null, next_cursor(slot))
      woken = woken + 1
    else
      for_user(user, slot, function() drop_snooze(user, slot) end)
    end
  end
end
return {woken}
