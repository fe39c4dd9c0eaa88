-- Drop read marks of expired notifications for a batch of users of one warehouse.
--
-- KEYS[1] readers set (user ids having read marks)
-- KEYS[2..] read marks zset of each user in ARGV[2..], same order
-- ARGV[1] now, ms since the epoch
-- ARGV[2..] user ids
-- Returns the number of read marks removed.

local removed = 0
for i = 2, #KEYS do
  removed = removed + redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', ARGV[1])
  if redis.call('EXISTS', KEYS[i]) == 0 then
    redis.call('SREM', KEYS[1], ARGV[i])
  end
end
return removed
