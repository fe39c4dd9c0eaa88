-- Release a rule's run lock, but only if this run still holds it (it may have expired and been
-- taken by another worker meanwhile: deleting that one's lock would let a third run overlap).
--
-- KEYS[1]  the lock (string holding the holder's token)
-- ARGV[1]  this run's token
-- Returns 1 when released, 0 when the lock was not ours.

if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
