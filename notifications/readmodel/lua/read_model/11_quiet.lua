-- --- Noise budget: what came quietly to whom ---
-- SPEC 17, read side of 11_noise_log: a slot's snapshot (places field "q:<slot>",
-- " <class>=<n> ...") judged for a user seeing the classes `seen`: quiet when the counts of
-- their classes add up to the budget or more.

-- Quiet for a user seeing the classes `seen` (a set), under `budget` (0: off): a function that
-- says of a slot's snapshot (places field "q:<slot>", or nil) whether it came quietly to them:
-- the counts of their classes in it add up to the budget or more.
local function quiet_judge(seen, budget)
  local needles = {}
  for class in pairs(seen) do needles[#needles + 1] = ' ' .. class .. '=' end
  return function(snapshot)
    if budget <= 0 or not snapshot then return false end
    local total = 0
    for i = 1, #needles do
      local _, at = string.find(snapshot, needles[i], 1, true)
      if at then
        total = total + tonumber(string.match(snapshot, '^%d+', at + 1))
        if total >= budget then return true end
      end
    end
    return false
  end
end

local function quiet_for(seen, snapshot, budget) return quiet_judge(seen, budget)(snapshot) end

-- Of `slots`, the positions (1-based, in order) of those that came quietly to a user seeing the
-- classes `seen` (a set) under `budget` (0: off): their snapshots in one read, judged as
-- quiet_for does (a snapshot the same as the one before it is not judged again: in a busy hour
-- many in a row are, every class's count having reached NOISE_KEEP).
local function quiet_positions(seen, slots, budget)
  local positions = {}
  if budget <= 0 or #slots == 0 then return positions end
  local fields = {}
  for i = 1, #slots do fields[i] = 'q:' .. slots[i] end
  local judge, last, quiet = quiet_judge(seen, budget), nil, false
  for i, snapshot in ipairs(redis.call('HMGET', KEYS[K.places], unpack(fields))) do
    if snapshot then
      if snapshot ~= last then last, quiet = snapshot, judge(snapshot) end
      if quiet then positions[#positions + 1] = i end
    end
  end
  return positions
end

-- Of `users` (`inboxes[i]` the inboxes users[i] sees, space-separated: "u:7 r:2"), those
-- `slot` came quietly to under `budget` (0: off): {user = true}. Every inbox's classes in one
-- read, the snapshot in another; nothing when it has no snapshot.
local function quiet_users(users, slot, inboxes, budget)
  local quiet = {}
  if budget <= 0 or #users == 0 then return quiet end
  local snapshot = redis.call('HGET', KEYS[K.places], 'q:' .. slot)
  if not snapshot then return quiet end
  local wanted, index, classes = {}, {}, {}
  for i = 1, #users do
    for inbox in string.gmatch(inboxes[i] or '', '%S+') do
      if not index[inbox] then
        wanted[#wanted + 1] = 'i:' .. inbox
        index[inbox] = #wanted
      end
    end
  end
  if #wanted > 0 then
    local found = redis.call('HMGET', KEYS[K.classes], unpack(wanted))
    for inbox, at in pairs(index) do classes[inbox] = found[at] or '' end
  end
  for i, user in ipairs(users) do
    local seen = {}
    for inbox in string.gmatch(inboxes[i] or '', '%S+') do
      for seen_class in string.gmatch(classes[inbox] or '', '%S+') do seen[seen_class] = true end
    end
    if quiet_for(seen, snapshot, budget) then quiet[user] = true end
  end
  return quiet
end
