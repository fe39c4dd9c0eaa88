-- Write the subscriber sets of one warehouse from one read of the database, atomically.
--
-- Each writer increments a pair's version counter before reading the database and passes the
-- number it got. A pair is written only while its counter still holds that number: a writer
-- that took a number later read the database later, so it writes a state at least as new and
-- this one must not land after it. Every written pair gets a new token, an empty set included
-- (the token is the mark that the pair is mirrored; see subscriptions/keys.py).
--
-- KEYS[3i-2] subscriber set of pair i     KEYS[3i-1] its token     KEYS[3i] its version counter
-- ARGV, per pair in the same order: version, new token, member count n, then n member ids
-- Returns, per pair: 1 written, 0 superseded (a later writer is on its way),
--                    -1 lost (the counter is gone or behind: Redis was emptied meanwhile)

local outcomes = {}
local at = 1
for i = 1, #KEYS, 3 do
  local version = tonumber(ARGV[at])
  local token = ARGV[at + 1]
  local count = tonumber(ARGV[at + 2])
  local current = tonumber(redis.call('GET', KEYS[i + 2]) or '-1')
  if current == version then
    redis.call('DEL', KEYS[i])
    for first = at + 3, at + 2 + count, 5000 do
      redis.call('SADD', KEYS[i], unpack(ARGV, first, math.min(first + 4999, at + 2 + count)))
    end
    redis.call('SET', KEYS[i + 1], token)
    outcomes[#outcomes + 1] = 1
  elseif current > version then
    outcomes[#outcomes + 1] = 0
  else
    outcomes[#outcomes + 1] = -1
  end
  at = at + 3 + count
end
return outcomes
