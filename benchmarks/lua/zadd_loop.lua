-- Baseline: the least a fan-out can do, one ZADD per inbox in one script call.
--
-- KEYS[1], KEYS[2], ... the inboxes (sorted sets)
-- ARGV[1] the score and member to add to each (a cursor)
-- Returns the number of inboxes written.
for i = 1, #KEYS do
  redis.call('ZADD', KEYS[i], ARGV[1], ARGV[1])
end
return #KEYS
