-- --- Told loudly ---------------------------------------------------------------------------------

-- "Told loudly" (pushed, reminded, a sound): of `users`, those who should be told of `slot`
-- now: it is open and not silenced (is_open), live, unread for them (read_by: not read, not
-- snoozed), not under their mute floor, and it did not come quietly to them (quiet_users, with
-- `inboxes[i]` the inboxes users[i] sees, space-separated, and `budget` the noise budget per
-- hour). Add a condition here, nowhere else.
local function to_tell(users, slot, inboxes, budget)
  local told = {}
  if #users == 0 or not live(slot) or not is_open(slot) then return told end
  local class, level, raise = place_of(slot)
  local read = read_by_users(users, slot, class, raise)
  local fields = {}
  for i, user in ipairs(users) do fields[i] = 'q:' .. user end
  local mutes = redis.call('HMGET', KEYS[K.users], unpack(fields))
  local quiet = quiet_users(users, slot, inboxes, budget)
  for i, user in ipairs(users) do
    if not read[user] and level >= mute_floor(mutes[i] or nil) and not quiet[user] then
      told[#told + 1] = user
    end
  end
  return told
end
