-- Remove one batch of expired notifications from inboxes, and finished ones from storage.
--
-- The caller splits big fan-outs into several calls so that no call runs long: it first sends
-- the inbox removals of a notification (in as many calls as needed), then its cursor among the
-- finished ones. A notification whose inbox removals were cut short stays in the expiry index
-- and is picked up again by the next sweep (every step is idempotent), and polls never show it
-- meanwhile because they check the expiry index.
--
-- KEYS[1] contents hash   KEYS[2] ids hash   KEYS[3] routes hash   KEYS[4] expiry zset
-- KEYS[5] flags hash   KEYS[6] states hash   KEYS[7] changes zset   KEYS[8] history hash
-- KEYS[9] escalations zset (the lifecycle's keys: see lua/lifecycle.lua)
-- KEYS[10] classes hash   KEYS[11] places hash   KEYS[12] open index zset
-- KEYS[13] watermarks hash   KEYS[14] markers hash   KEYS[15] readopen hash
--          (the read model's keys: a finished notification leaves its class, the open index
--          and the counts of those who read it one by one; see lua/inbox.lua)
-- KEYS[16..] inbox keys, one per removal (a key may repeat)
-- ARGV[1] f = how many notifications are finished
-- ARGV[2 .. 1+f] their cursors;  ARGV[2+f .. 1+2f] their ids (UUIDs)
-- ARGV[2+2f ..] one cursor per inbox key in KEYS[16..], same order
-- Returns {inbox entries removed, notifications removed}

local f = tonumber(ARGV[1])
local FIRST_INBOX = 16

local function leave_class(class)
  if redis.call('HINCRBY', KEYS[10], 'n:' .. class, -1) > 0 then return end
  local members = redis.call('HGET', KEYS[10], class) or ''
  for member in string.gmatch(members, '%S+') do
    local field = 'i:' .. member
    local list = string.gsub(' ' .. (redis.call('HGET', KEYS[10], field) or '') .. ' ',
                             ' ' .. class .. ' ', ' ')
    list = string.match(list, '^%s*(.-)%s*$')
    if list == '' then redis.call('HDEL', KEYS[10], field) else redis.call('HSET', KEYS[10], field, list) end
  end
  redis.call('HDEL', KEYS[10], class, 'n:' .. class)
end

local function forget_read_open(user, head)
  redis.call('HDEL', KEYS[15], user .. ':' .. head)
  local index = string.gsub(' ' .. (redis.call('HGET', KEYS[15], user) or '') .. ' ',
                            ' ' .. string.gsub(head, '%p', '%%%0') .. ' ', ' ')
  index = string.match(index, '^%s*(.-)%s*$')
  if index == '' then redis.call('HDEL', KEYS[15], user) else redis.call('HSET', KEYS[15], user, ' ' .. index) end
end

-- Out of the open index and out of the counts of those who read it one by one.
local function retire(slot, place)
  redis.call('ZREM', KEYS[12], place .. ':' .. slot)
  local markers = redis.call('HGET', KEYS[14], slot)
  if not markers then return end
  local class, level, raise = string.match(place, '^(.-):(%d):(%d+)$')
  for user in string.gmatch(markers, '%S+') do
    if tonumber(raise) > tonumber(redis.call('HGET', KEYS[13], user) or '0') then
      local head = class .. ':' .. level
      if redis.call('HINCRBY', KEYS[15], user .. ':' .. head, -1) <= 0 then
        forget_read_open(user, head)
      end
    end
  end
end

local removed = 0
for i = FIRST_INBOX, #KEYS do
  removed = removed + redis.call('ZREM', KEYS[i], ARGV[2 * f + i - FIRST_INBOX + 2])
end
local finished = 0
for i = 2, 1 + f do
  local c = ARGV[i]
  finished = finished + redis.call('ZREM', KEYS[4], c)
  local place = redis.call('HGET', KEYS[11], c)
  if place then
    local flag = redis.call('HGET', KEYS[5], c)
    if not flag or string.byte(flag, 1) == 111 then retire(c, place) end
    leave_class(string.match(place, '^(.-):'))
    redis.call('HDEL', KEYS[11], c)
    redis.call('HDEL', KEYS[14], c)
  end
  redis.call('HDEL', KEYS[1], c)
  redis.call('HDEL', KEYS[3], c)
  redis.call('HDEL', KEYS[2], ARGV[i + f])
  redis.call('HDEL', KEYS[5], c)
  redis.call('HDEL', KEYS[6], c)
  redis.call('ZREM', KEYS[7], c)
  redis.call('HDEL', KEYS[8], c)
  redis.call('ZREM', KEYS[9], c)
end
return {removed, finished}
