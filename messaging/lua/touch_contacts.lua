-- Moves users to the front of a recent-contacts list and caps it (Redis in Action 6.1.1,
-- as one atomic script instead of MULTI around LREM/LPUSH/LTRIM).
-- KEYS[1] the user's contacts list
-- ARGV[1] how many to keep, ARGV[2..] user ids, the most recent last
-- Returns nothing.
for i = 2, #ARGV do
  redis.call('LREM', KEYS[1], 0, ARGV[i])
end
redis.call('LPUSH', KEYS[1], unpack(ARGV, 2))
redis.call('LTRIM', KEYS[1], 0, tonumber(ARGV[1]) - 1)
return 1
