-- Removes a member from a sorted set only if its score is at most a bound, so a removal
-- based on an old state never undoes a newer addition (indexes written outside a chat's slot).
-- KEYS[1] the sorted set
-- ARGV[1] the member, ARGV[2] the highest score that may be removed
-- Returns 1 if removed, else 0.
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if score and tonumber(score) <= tonumber(ARGV[2]) then
  return redis.call('ZREM', KEYS[1], ARGV[1])
end
return 0
