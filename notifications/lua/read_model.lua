-- The read model's shared helpers (README "The read model"). The loader puts this file in
-- front of publish.lua, inbox.lua, lifecycle.lua, expire.lua and forget_reader.lua (LuaScript
-- prelude): written once, never copied. Each script declares the keys at its own KEYS
-- positions, so every helper takes the keys it touches as arguments. No writes of its own at
-- load time.
-- KEYS[] none of its own: each helper's `..._key` parameters are KEYS entries of the script.
-- ARGV none of its own.
-- Returns nothing: it only defines local functions for the script that follows it.
--
-- Names used below:
--   place   "<class>:<severity digit>:<raise cursor, 16 digits>" (places hash, per slot)
--   head    "<class>:<severity digit>" (one counter of the open index)
--   watermarks of a user: "<class>=<cursor> <class>=<cursor> ..." (watermarks hash, field
--           <user id>): everything of that class raised up to the cursor is read for the user.
--           "*=<cursor>" covers every class (a plain number, written before watermarks were per
--           class, reads as that).

local function pad(n) return string.format('%016.0f', n) end
local function text(n) return string.format('%.0f', n) end

-- class (text), severity digit (number), raise cursor (number) of a place.
local function place_parts(place)
  local class, level, raise = string.match(place, '^(.-):(%d):(%d+)$')
  return class, tonumber(level), tonumber(raise)
end

local function make_place(class, level, raise)
  return class .. ':' .. level .. ':' .. pad(raise)
end

local function is_open_flag(flag)
  return not flag or string.byte(flag, 1) == 111 -- 'o'
end

-- " 3 7 12" holds user "7"?
local function has_word(list, word)
  return list ~= false and list ~= nil
    and string.find(' ' .. list .. ' ', ' ' .. word .. ' ', 1, true) ~= nil
end

local function without_word(list, word)
  local rest = string.gsub(' ' .. (list or '') .. ' ', ' ' .. string.gsub(word, '%p', '%%%0') .. ' ', ' ')
  return string.match(rest, '^%s*(.-)%s*$')
end

-- --- Watermarks ("mark all read"), per user and class ---------------------------------------

local function watermarks_of(watermarks_key, user)
  local raw = redis.call('HGET', watermarks_key, user)
  local marks = {}
  if not raw then return marks end
  if tonumber(raw) then
    marks['*'] = tonumber(raw)
    return marks
  end
  for class, cursor in string.gmatch(raw, '([^%s=]+)=(%d+)') do marks[class] = tonumber(cursor) end
  return marks
end

local function watermark_in(marks, class)
  return marks[class] or marks['*'] or 0
end

-- The user's watermark for the class of `place` (one HGET; scripts that look at many places of
-- one user read watermarks_of once instead).
local function user_watermark(watermarks_key, user, class)
  return watermark_in(watermarks_of(watermarks_key, user), class)
end

local function save_watermarks(watermarks_key, user, marks)
  local parts = {}
  for class, cursor in pairs(marks) do parts[#parts + 1] = class .. '=' .. text(cursor) end
  table.sort(parts)
  if #parts == 0 then
    redis.call('HDEL', watermarks_key, user)
  else
    redis.call('HSET', watermarks_key, user, table.concat(parts, ' '))
  end
end

-- --- Read for a user: the one rule ---------------------------------------------------------
-- Every script that says whether a notification is read for a user (a poll, a lifecycle
-- reply, a live event on the stream) asks read_for; none decides it another way.

-- class, severity digit, raise cursor of a slot (nil class and level 0: published before the
-- read model; its raise cursor is its slot).
local function place_in(places_key, slot)
  local place = redis.call('HGET', places_key, slot)
  if not place then return nil, 0, tonumber(slot) end
  return place_parts(place)
end

-- Whether the user has an active snooze of `slot` (until beat wakes it: lifecycle.lua).
local function snoozed(snoozes_key, user, slot)
  return redis.call('ZSCORE', snoozes_key, user .. ':' .. slot) ~= false
end

-- Marked read one by one (a live mark: it lasts as long as the notification) or snoozed.
local function marked_for(read_marks_key, snoozes_key, user, slot, now)
  local mark = redis.call('ZSCORE', read_marks_key, slot)
  return (mark ~= false and tonumber(mark) > now) or snoozed(snoozes_key, user, slot)
end

-- Read for the user whose watermarks (watermarks_of) are `marks`: raised at or below their
-- watermark of its class ("mark all read"), or marked one by one, or snoozed.
local function read_for(marks, read_marks_key, snoozes_key, user, slot, class, raise, now)
  return raise <= watermark_in(marks, class) or marked_for(read_marks_key, snoozes_key, user, slot, now)
end

-- --- Classes (sets of inboxes) ------------------------------------------------------------

local function enter_class(classes_key, class, members)
  if redis.call('HSETNX', classes_key, class, members) == 1 then
    for member in string.gmatch(members, '%S+') do
      local list = redis.call('HGET', classes_key, 'i:' .. member)
      redis.call('HSET', classes_key, 'i:' .. member, (list and (list .. ' ') or '') .. class)
    end
  end
  redis.call('HINCRBY', classes_key, 'n:' .. class, 1)
end

local function leave_class(classes_key, class)
  if redis.call('HINCRBY', classes_key, 'n:' .. class, -1) > 0 then return end
  local members = redis.call('HGET', classes_key, class) or ''
  for member in string.gmatch(members, '%S+') do
    local field = 'i:' .. member
    local list = without_word(redis.call('HGET', classes_key, field), class)
    if list == '' then redis.call('HDEL', classes_key, field) else redis.call('HSET', classes_key, field, list) end
  end
  redis.call('HDEL', classes_key, class, 'n:' .. class)
end

-- --- One-by-one reads of open ones (readopen hash) ----------------------------------------

local function forget_read_open(readopen_key, user, head)
  redis.call('HDEL', readopen_key, user .. ':' .. head)
  local index = without_word(redis.call('HGET', readopen_key, user), head)
  if index == '' then redis.call('HDEL', readopen_key, user) else redis.call('HSET', readopen_key, user, ' ' .. index) end
end

local function bump_read_open(readopen_key, user, head)
  if redis.call('HINCRBY', readopen_key, user .. ':' .. head, 1) == 1 then
    local index = redis.call('HGET', readopen_key, user) or ''
    if not has_word(index, head) then
      redis.call('HSET', readopen_key, user, index .. ' ' .. head)
    end
  end
end

local function drop_read_open(readopen_key, user, head)
  if redis.call('HINCRBY', readopen_key, user .. ':' .. head, -1) <= 0 then
    forget_read_open(readopen_key, user, head)
  end
end

-- An open notification at `place` enters (delta 1) or leaves (delta -1) the counts of every
-- user who marked it read one by one while their watermark for its class was below its raise.
local function tally(markers_key, watermarks_key, readopen_key, slot, place, delta)
  local markers = redis.call('HGET', markers_key, slot)
  if not markers then return end
  local class, level, raise = place_parts(place)
  local head = class .. ':' .. level
  for user in string.gmatch(markers, '%S+') do
    if raise > user_watermark(watermarks_key, user, class) then
      if delta > 0 then
        bump_read_open(readopen_key, user, head)
      else
        drop_read_open(readopen_key, user, head)
      end
    end
  end
end

-- --- Snoozes (README "Snooze"): per user, an active snooze is that user's read mark --------
-- snoozes zset:  "<user id>:<slot>" -> when it wakes (ms); beat pops the due ones by score.
-- snoozers hash: "<slot>" -> " <user id> ..." (who snoozed it: a re-raise, an escalation or a
--                release wakes them in the same call); "u:<user id>" -> " <slot> ..." (what the
--                user snoozed: their Snoozed list, and forgetting a deleted user).

local function add_word(hash_key, field, word)
  local list = redis.call('HGET', hash_key, field)
  if not has_word(list, word) then
    redis.call('HSET', hash_key, field, (list or '') .. ' ' .. word)
  end
end

local function remove_word(hash_key, field, word)
  local list = redis.call('HGET', hash_key, field)
  if not has_word(list, word) then return end
  local rest = without_word(list, word)
  if rest == '' then redis.call('HDEL', hash_key, field) else redis.call('HSET', hash_key, field, ' ' .. rest) end
end

-- Takes the user's snooze of `slot` out of both indexes (the read model is the caller's).
local function drop_snooze(snoozes_key, snoozers_key, user, slot)
  redis.call('ZREM', snoozes_key, user .. ':' .. slot)
  remove_word(snoozers_key, slot, user)
  remove_word(snoozers_key, 'u:' .. user, slot)
end

-- Every snooze of a slot that is finished (the expiry sweep): nothing left behind.
local function drop_snoozes_of(snoozes_key, snoozers_key, slot)
  local users = redis.call('HGET', snoozers_key, slot)
  if not users then return end
  for user in string.gmatch(users, '%S+') do
    redis.call('ZREM', snoozes_key, user .. ':' .. slot)
    remove_word(snoozers_key, 'u:' .. user, slot)
  end
  redis.call('HDEL', snoozers_key, slot)
end
