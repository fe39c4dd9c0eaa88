-- Test script: store a value and answer which key and value it got.
--
-- KEYS[1]  a string key
-- ARGV[1]  the value to store
-- Returns {KEYS[1], ARGV[1]}

redis.call('SET', KEYS[1], ARGV[1])
return {KEYS[1], ARGV[1]}
