-- Which of some users an alert came quietly to (SPEC 17 noise budget; read_model.lua "Noise
-- budget": quiet_for), for the push task: the same answer as their polls.
-- Preludes: read_model
-- KEYS[1..20] the warehouse (read_model.lua)
-- ARGV[1] now   ARGV[2] notification id   ARGV[3] the noise budget per hour (0: off)
-- ARGV[4..] per user, the inboxes they see in the warehouse, space-separated ("u:7 r:2")
-- Returns the positions (1-based, among ARGV[4..]) of the users it came quietly to.

local budget = tonumber(ARGV[3])
local slot = redis.call('HGET', KEYS[K.ids], ARGV[2])
if budget <= 0 or not slot or #ARGV < 4 then return {} end
local snapshot = redis.call('HGET', KEYS[K.places], 'q:' .. slot)
if not snapshot then return {} end
-- Every inbox's classes in one read.
local fields, index = {}, {}
for i = 4, #ARGV do
  for inbox in string.gmatch(ARGV[i], '%S+') do
    if not index[inbox] then
      fields[#fields + 1] = 'i:' .. inbox
      index[inbox] = #fields
    end
  end
end
if #fields == 0 then return {} end
local found = redis.call('HMGET', KEYS[K.classes], unpack(fields))
local reply = {}
for i = 4, #ARGV do
  local seen = {}
  for inbox in string.gmatch(ARGV[i], '%S+') do
    for class in string.gmatch(found[index[inbox]] or '', '%S+') do seen[class] = true end
  end
  if quiet_for(seen, snapshot, budget) then reply[#reply + 1] = i - 3 end
end
return reply
