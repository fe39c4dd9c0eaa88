-- De-duplicate one run of one rule in one warehouse: which of the run's alert keys to send now.
--
-- A mark (alert key -> ms when it was sent) lives while the rule keeps yielding the key. Keys
-- the run no longer yields are forgotten (their condition cleared, so a return is news again).
-- A key is sent when it has no mark, or its mark is at least the cool-down old (a reminder).
--
-- The keys returned are claimed with a pending mark (minus the time) before the caller
-- publishes, so two overlapping runs cannot both send one; the caller then confirms each sent
-- key (mark = the time, positive) or removes the mark when publishing failed. A pending mark
-- older than ARGV[3] belongs to a run that died half-way: its key is sent again, not lost.
--
-- KEYS[1]  hash alert key -> ms sent (negative: claimed at -ms, not yet confirmed)
-- ARGV[1]  now, ms since the epoch
-- ARGV[2]  cool-down, ms (0: send on every run, keep no marks)
-- ARGV[3]  ms after which a pending claim counts as abandoned
-- ARGV[4..] the alert keys this run yields in this warehouse (none: the warehouse is all clear)
-- Returns the keys to send now.

local now = tonumber(ARGV[1])
local cooldown = tonumber(ARGV[2])
local abandoned = tonumber(ARGV[3])
if cooldown <= 0 then
  redis.call('DEL', KEYS[1])
  local all = {}
  for i = 4, #ARGV do
    all[#all + 1] = ARGV[i]
  end
  return all
end

local current = {}
for i = 4, #ARGV do
  current[ARGV[i]] = true
end

local marks = redis.call('HGETALL', KEYS[1])
for i = 1, #marks, 2 do
  if not current[marks[i]] then
    redis.call('HDEL', KEYS[1], marks[i])
  end
end

local send = {}
for i = 4, #ARGV do
  local key = ARGV[i]
  local mark = tonumber(redis.call('HGET', KEYS[1], key))
  local due
  if mark == nil then
    due = true
  elseif mark < 0 then
    due = now + mark >= abandoned
  else
    due = now - mark >= cooldown
  end
  if due then
    send[#send + 1] = key
    redis.call('HSET', KEYS[1], key, -now)
  end
end

-- Marks older than the cool-down are due again anyway: a rule that stops running (deleted,
-- deactivated) leaves nothing behind for longer than that.
if redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('PEXPIRE', KEYS[1], cooldown)
end
return send
