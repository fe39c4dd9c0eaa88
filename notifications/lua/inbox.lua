-- One user's view of one warehouse: list, latest unread, or mark read; one atomic call each.
--
-- The user sees the union of their own inbox and their roles' inboxes; a notification that
-- reached them twice counts once. Expired notifications are skipped here even before the sweep
-- removes them. Read marks are per user, scored by the notification's expiry so the sweep can
-- drop them by score.
--
-- Unread means: not read by me and still open (flags hash; see lua/lifecycle.lua). Inboxes hold
-- a notification's first cursor (its slot); a change of status gives it a new cursor in the
-- changes zset, and a list merges both, so a changed notification comes again after `since`,
-- with its new cursor and state, read or not.
--
-- KEYS[1] contents hash   KEYS[2] expiry zset   KEYS[3] the user's read marks zset
-- KEYS[4] ids hash        KEYS[5] readers set (user ids having read marks)
-- KEYS[6] flags hash      KEYS[7] states hash   KEYS[8] changes zset
-- KEYS[9..] the inboxes the user sees: their own, then one per role
-- ARGV[1] operation: "list", "latest" or "read"
-- ARGV[2] now, ms since the epoch   ARGV[3] user id
-- list:   ARGV[4] since (exclusive cursor)  ARGV[5] limit  ARGV[6] "1" to include read ones
-- latest: ARGV[4] how many
-- read:   ARGV[4] "all" or "ids"  ARGV[5..] notification ids (UUIDs)
-- Returns {unread count, next_since (list) | marked (read) | 0 (latest),
--          unread info, unread warning, unread critical,
--          then for each item: cursor, content JSON, read flag (1/0), state JSON or false}

local op = ARGV[1]
local now = tonumber(ARGV[2])

-- Cursors are decimal integers without leading zeros: comparing length, then text, orders them
-- numerically without converting every one of them to a number.
local function before(a, b)
  if #a ~= #b then return #a < #b end
  return a < b
end

-- Every cursor the user can see, once, oldest first. One non-empty inbox is already in order.
local lists = {}
for i = 9, #KEYS do
  local members = redis.call('ZRANGE', KEYS[i], 0, -1)
  if #members > 0 then lists[#lists + 1] = members end
end
local cursors, visible = {}, {}
if #lists == 1 then
  cursors = lists[1]
  for _, c in ipairs(cursors) do visible[c] = true end
else
  for _, members in ipairs(lists) do
    for _, c in ipairs(members) do
      if not visible[c] then
        visible[c] = true
        cursors[#cursors + 1] = c
      end
    end
  end
  table.sort(cursors, before)
end

-- Expired but not yet swept: few, since the sweep runs every minute. Read marks of live
-- notifications: at most the visible ones. Both come back as small lookup tables.
local expired, read = {}, {}
for _, c in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now)) do expired[c] = true end
for _, c in ipairs(redis.call('ZRANGEBYSCORE', KEYS[3], '(' .. now, '+inf')) do read[c] = true end
-- The sweep removes a notification's inbox entries before its expiry index entry, so a
-- visible cursor is either in the expired range or live.
local second = 0
if op == 'read' then
  local wanted = {}
  if ARGV[4] == 'all' then
    wanted = cursors
  elseif #ARGV >= 5 then
    local ids = {}
    for i = 5, #ARGV do
      ids[#ids + 1] = ARGV[i]
    end
    for _, c in ipairs(redis.call('HMGET', KEYS[4], unpack(ids))) do
      -- Ids that are not the user's (or unknown) are ignored, never an error.
      if c and visible[c] then
        wanted[#wanted + 1] = c
      end
    end
  end
  for i, c in ipairs(wanted) do
    if not expired[c] and not read[c] then
      redis.call('ZADD', KEYS[3], redis.call('ZSCORE', KEYS[2], c), c)
      read[c] = true
      second = second + 1
    end
  end
  if second > 0 then
    redis.call('SADD', KEYS[5], ARGV[3])
  end
end

-- Of the live ones not read by me, the open ones are unread; their flags also give the
-- severity ("o0": open info, ...: see keys.flags). Missing flags (published before the
-- lifecycle existed) mean open and info. unread[c] is the severity's index in `severities`.
local unread, severities = {}, {0, 0, 0}
local count = 0
for first = 1, #cursors, 4000 do
  local last = math.min(first + 3999, #cursors)
  local flags = redis.call('HMGET', KEYS[6], unpack(cursors, first, last))
  for i = first, last do
    local c = cursors[i]
    if not expired[c] and not read[c] then
      local flag = flags[i - first + 1]
      local level = 1
      if flag then
        level = string.byte(flag, 1) == 111 and string.byte(flag, 2) - 47 -- 'o': open; '0' -> 1
      end
      if level then
        unread[c] = level
        count = count + 1
        severities[level] = severities[level] + 1
      end
    end
  end
end

local reply = {count, 0, severities[1], severities[2], severities[3]}
local function add(c, cursor)
  reply[#reply + 1] = cursor
  reply[#reply + 1] = redis.call('HGET', KEYS[1], c)
  reply[#reply + 1] = read[c] and 1 or 0
  reply[#reply + 1] = redis.call('HGET', KEYS[7], c) or false
end

if op == 'list' then
  local since, limit, include_read = tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6] == '1'
  -- Changed after `since` (their new cursor is above it), in the order of their new cursors:
  -- each comes with its new state whether read or not, so clients replace their copy.
  local changed, moved = {}, {}
  local after = redis.call('ZRANGEBYSCORE', KEYS[8], '(' .. ARGV[4], '+inf', 'WITHSCORES')
  for i = 1, #after, 2 do
    local c = after[i]
    moved[c] = true
    if visible[c] and not expired[c] then
      changed[#changed + 1] = {c, string.format('%.0f', tonumber(after[i + 1]))}
    end
  end
  -- Unchanged ones after `since`, by their first cursor, merged with the changed ones; the
  -- walk stops at `limit`.
  local function plain_after(from)
    for k = from, #cursors do
      local c = cursors[k]
      if not moved[c] and not expired[c] and (include_read or unread[c]) and tonumber(c) > since then
        return k, c
      end
    end
    return #cursors + 1, nil
  end
  local next_since = ARGV[4]
  local i, a = plain_after(1)
  local j = 1
  for _ = 1, limit do
    local b = changed[j]
    if a == nil and b == nil then break end
    if b == nil or (a ~= nil and before(a, b[2])) then
      add(a, a)
      next_since = a
      i, a = plain_after(i + 1)
    else
      add(b[1], b[2])
      next_since = b[2]
      j = j + 1
    end
  end
  reply[2] = next_since
elseif op == 'latest' then
  local want = tonumber(ARGV[4])
  for i = #cursors, 1, -1 do
    if want <= 0 then break end
    local c = cursors[i]
    if unread[c] then
      local changed = redis.call('ZSCORE', KEYS[8], c)
      add(c, changed and string.format('%.0f', tonumber(changed)) or c)
      want = want - 1
    end
  end
elseif op == 'read' then
  reply[2] = second
end
return reply
