-- Drop read marks of expired notifications for a batch of users of one warehouse, at most a
-- given number of marks per call (so no call runs long however many marks a user has).
--
-- KEYS[1] readers set (user ids having read marks)
-- KEYS[2..] read marks zset of each user in ARGV[3..], same order
-- ARGV[1] now, ms since the epoch
-- ARGV[2] most marks to remove in this call
-- ARGV[3..] user ids
-- Returns {marks removed, how many of the users are done (from the first; the caller sends
--          the rest again)}

local budget = tonumber(ARGV[2])
local removed = 0
for i = 2, #KEYS do
  -- Marks are scored by their notification's expiry: the expired ones are the lowest ranks.
  local due = redis.call('ZCOUNT', KEYS[i], '-inf', ARGV[1])
  local take = math.min(due, budget)
  if take > 0 then
    removed = removed + redis.call('ZREMRANGEBYRANK', KEYS[i], 0, take - 1)
    budget = budget - take
  end
  if take < due then
    return {removed, i - 2}
  end
  if redis.call('EXISTS', KEYS[i]) == 0 then
    redis.call('SREM', KEYS[1], ARGV[i + 1])
  end
  if budget <= 0 then
    return {removed, i - 1}
  end
end
return {removed, #KEYS - 1}
