-- --- Read for a user: the one rule --------------------------------------------------------------

local function parse_marks(raw)
  local marks = {}
  if not raw then return marks end
  if tonumber(raw) then
    marks['*'] = tonumber(raw)
    return marks
  end
  for class, cursor in string.gmatch(raw, '([^%s=]+)=(%d+)') do marks[class] = tonumber(cursor) end
  return marks
end

local function marks_of(user) return parse_marks(redis.call('HGET', KEYS[K.users], user)) end

local function watermark_in(marks, class)
  return (class and marks[class]) or marks['*'] or 0
end

local function save_marks(user, marks)
  local parts = {}
  for class, cursor in pairs(marks) do parts[#parts + 1] = class .. '=' .. text(cursor) end
  table.sort(parts)
  if #parts == 0 then redis.call('HDEL', KEYS[K.users], user)
  else redis.call('HSET', KEYS[K.users], user, table.concat(parts, ' ')) end
end

-- Read for a user with watermarks `marks`, whose field of the slot is `own` (or nil) and who
-- has (`snoozed`) or has not an active snooze of it: snoozed, or read one by one since its
-- last raise, or raised at or below the watermark of its class, unless woken after that
-- watermark (then it counts as raised when it woke).
local function read_by(marks, class, raise, own, snoozed)
  if snoozed then return true end
  local floor = raise
  if own then
    local woke = string.match(own, '^w(%d+)$')
    if woke then
      floor = math.max(raise, tonumber(woke))
    elseif tonumber(own) >= raise then
      return true
    end
  end
  return floor <= watermark_in(marks, class)
end

local function snooze_of(user, slot)
  return redis.call('ZSCORE', KEYS[K.snoozes], user .. ':' .. slot)
end

local function own_of(user, slot) return redis.call('HGET', KEYS[K.reads], user .. ':' .. slot) end

-- read_by for one user and slot, reading what it needs.
local function is_read(user, slot, marks, class, raise)
  return read_by(marks, class, raise, own_of(user, slot), snooze_of(user, slot) ~= false)
end

-- For many users of one slot at once (three calls): {user = read?}.
local function read_by_users(users, slot, class, raise)
  local found = {}
  if #users == 0 then return found end
  local owns, members = {}, {}
  for i, user in ipairs(users) do
    owns[i] = user .. ':' .. slot
    members[i] = user .. ':' .. slot
  end
  local marks = redis.call('HMGET', KEYS[K.users], unpack(users))
  local own = redis.call('HMGET', KEYS[K.reads], unpack(owns))
  local snoozed = redis.call('ZMSCORE', KEYS[K.snoozes], unpack(members))
  for i, user in ipairs(users) do
    found[user] = read_by(parse_marks(marks[i]), class, raise, own[i] or nil, snoozed[i] ~= false)
  end
  return found
end
