-- Baseline: the least an atomic chat send can do: the next id, and the message stored under it.
--
-- KEYS[1] the chat's message id sequence (string)   KEYS[2] the chat's messages (sorted set)
-- ARGV[1] sender's user id   ARGV[2] body   ARGV[3] now in ms
-- Returns the new message's id.
local id = redis.call('INCR', KEYS[1])
local msg = cjson.encode({id = id, sender = tonumber(ARGV[1]), body = ARGV[2], ts = tonumber(ARGV[3])})
redis.call('ZADD', KEYS[2], id, msg)
return id
