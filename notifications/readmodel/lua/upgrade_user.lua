-- Moves one user's read state in a warehouse from the layout before this package (the
-- `watermarks` and `snoozers` hashes, the `read:<user id>` sorted set) into `users`, `reads`
-- and `snoozes`, through the prelude's `mark` and `snooze` (`manage.py migrate_read_state`;
-- call again while it returns more than 0; idempotent; recount.lua then counts the warehouse).
-- The old watermarks are taken only while the user has no state of the new layout that they
-- would change (their own "mark all read", tallies or woken ones): then the new state wins.
-- Preludes: read_model
-- KEYS[1..23] the warehouse (read_model/01_layout.lua)   KEYS[24] the old watermarks hash
-- KEYS[25] the old snoozers hash   KEYS[26] the user's old read marks (sorted set of slots)
-- ARGV[1] now   ARGV[2] user id   ARGV[3] most read marks moved in this call
-- Returns {read marks still to move, 1 when old watermarks were taken, -1 when the new state
--   won over them, 0 when there were none; read marks moved, snoozes moved}.

local OLD_MARKS, OLD_SNOOZERS, OLD_READS = FIRST_OWN, FIRST_OWN + 1, FIRST_OWN + 2
local user = ARGV[2]
local took = 0
local old = redis.call('HGET', KEYS[OLD_MARKS], user)
if old then
  local fresh = redis.call('HEXISTS', KEYS[K.users], user) == 0
    and redis.call('HEXISTS', KEYS[K.users], 'r:' .. user) == 0
    and redis.call('HEXISTS', KEYS[K.users], 'w:' .. user) == 0
  if fresh then
    save_marks(user, parse_marks(old))
    redis.call('HINCRBY', KEYS[K.users], 'v:' .. user, 1)
    took = 1
  else
    took = -1
  end
end
redis.call('HDEL', KEYS[OLD_MARKS], user, 'v:' .. user)

-- Snoozes: the sorted set kept its layout; each is added again with the user's list and tally.
local snoozes = 0
for _, slot in ipairs(words(redis.call('HGET', KEYS[OLD_SNOOZERS], 'u:' .. user))) do
  local member = user .. ':' .. slot
  local wakes = redis.call('ZSCORE', KEYS[K.snoozes], member)
  if wakes and not has_word(redis.call('HGET', KEYS[K.users], 's:' .. user), slot) then
    redis.call('ZREM', KEYS[K.snoozes], member)
    if live(slot) and tonumber(wakes) > NOW then
      snooze(user, slot, wakes)
      snoozes = snoozes + 1
    end
  end
end
redis.call('HDEL', KEYS[OLD_SNOOZERS], 'u:' .. user)

-- Read marks, a batch at a time: a mark of the old layout was of the slot's current raise (a
-- raise dropped them), so each live one is marked read now.
local moved = 0
local batch = redis.call('ZRANGE', KEYS[OLD_READS], 0, tonumber(ARGV[3]) - 1)
for _, slot in ipairs(batch) do
  if live(slot) then
    local class, _, raise = place_of(slot)
    if not is_read(user, slot, marks_of(user), class, raise) then
      mark(user, slot)
      moved = moved + 1
    end
  end
end
if #batch > 0 then redis.call('ZREM', KEYS[OLD_READS], unpack(batch)) end
return {redis.call('ZCARD', KEYS[OLD_READS]), took, moved, snoozes}
