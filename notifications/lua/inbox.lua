-- One user's view of one warehouse: a page, the newest unread, or mark read; one atomic call each.
--
-- The work grows with the page, not with what the user can see (README "The read model"):
-- a page reads each inbox only after `since` and only as far as the page needs (merged here,
-- a notification in two of the user's inboxes once), and the changes zset likewise; unread
-- counts come from the open index (one ZLEXCOUNT per class and severity the user's inboxes are
-- in) less what the user marked read one by one (readopen), less what expired and is not swept
-- yet (at most ARGV-given many looked at: the sweep keeps up, /metrics shows when it does not).
-- "Mark all read" moves the user's watermark of each class they see now: everything of those
-- classes raised up to it is read; a class they see later (a role joined) keeps its own.
-- Helpers (place_parts, watermarks_of, ...) come from read_model.lua, put in front by the loader.
--
-- Unread means: not read by me and still open. Inboxes hold a notification's first cursor (its
-- slot); a change of status gives it a new cursor in the changes zset, and a page merges both,
-- so a changed notification comes again after `since`, with its new cursor and state, read or
-- not. Expired notifications are skipped even before the sweep removes them.
--
-- KEYS[1] contents hash   KEYS[2] expiry zset   KEYS[3] the user's read marks zset
-- KEYS[4] ids hash        KEYS[5] readers set   KEYS[6] flags hash   KEYS[7] states hash
-- KEYS[8] changes zset    KEYS[9] sequence      KEYS[10] classes hash   KEYS[11] places hash
-- KEYS[12] open index zset   KEYS[13] watermarks hash   KEYS[14] markers hash
-- KEYS[15] readopen hash   KEYS[16] snoozes zset ("<user id>:<slot>" -> when it wakes: an
--          active snooze is the user's read mark, and the default list leaves it out)
-- KEYS[17] snoozers hash ("u:<user id>" -> the slots the user snoozed)
-- KEYS[18..] the inboxes the user sees: their own, then one per role
-- ARGV[1] operation: "list", "latest", "read" or "snoozed"
-- ARGV[2] now, ms since the epoch   ARGV[3] user id
-- ARGV[4] most expired but not yet swept notifications looked at to leave them out of counts
-- ARGV[5..7] the client's If-None-Match (notifications/api/etags.py), '' '' '' for none:
--         ARGV[5] the ETag's text before the version, ARGV[6] its text after it, ARGV[7] the
--         client's ETags (their hex, space separated). When one of them is sha1 of
--         ARGV[5] .. "<sequence>|<next expiry>|<read version>" .. ARGV[6] now, the script
--         reads nothing more and answers "not modified" (below).
-- list:   ARGV[8] since (exclusive cursor)  ARGV[9] limit  ARGV[10] "1" to include read ones
--         ARGV[11] most entries to look at beyond the page (then next_since says how far it got)
--         ARGV[12] "1" to also return `oldest` (what a stream needs to decide it can replay)
-- latest: ARGV[8] how many
-- snoozed: ARGV[8] how many: the user's snoozed ones they still see, earliest wake first
-- read:   ARGV[8] "all": ARGV[9] most notifications also marked one by one (a small "all")
--         ARGV[8] "ids": ARGV[9..] notification ids (UUIDs)
-- Returns the 10 head values named in notifications/store.py (INBOX_HEAD), in this order:
--          unread, next_since (list) | marked (read) | 0 (latest),
--          unread info, unread warning, unread critical,
--          sequence, next expiry (ms, "" when none), the user's read version,
--          has_more (list: 1 when the page stopped before the newest change),
--          oldest (list: the oldest slot still in the user's inboxes, "" when none),
--          then for each item: cursor, content JSON, read flag (1/0), state JSON or false,
--          the user's snooze of it (when it wakes, ms) or false;
--          or, when the client's ETag is still the answer's, the head alone with "not
--          modified" as its first value (sequence, next expiry and read version as above).

local op = ARGV[1]
local now = tonumber(ARGV[2])
local uid = ARGV[3]
local expired_scan = tonumber(ARGV[4])
local FIRST_INBOX = 18
local HEAD = 10

-- What the answer's ETag depends on besides the user, the query and the format.
local function etag_parts()
  local next_expiry = redis.call('ZRANGEBYSCORE', KEYS[2], '(' .. ARGV[2], '+inf', 'WITHSCORES',
                                 'LIMIT', 0, 1)
  return redis.call('GET', KEYS[9]) or '0',
         next_expiry[2] and text(tonumber(next_expiry[2])) or '',
         redis.call('HGET', KEYS[13], 'v:' .. uid) or '0'
end

-- A poll whose ETag is still the answer's: three reads, as the answer would be the client's
-- copy. (One that is not goes on in this same call: no second round trip after a change;
-- and, as nothing but "read" writes, the answer's head reuses these three.)
local version_read
if ARGV[7] ~= '' and op ~= 'read' then
  version_read = {etag_parts()}
  local sequence, next_expiry, read_version = unpack(version_read)
  local tag = string.sub(redis.sha1hex(ARGV[5] .. sequence .. '|' .. next_expiry .. '|'
                                       .. read_version .. ARGV[6]), 1, 24)
  if has_word(ARGV[7], tag) then
    return {'not modified', 0, 0, 0, 0, sequence, next_expiry, read_version, 0, ''}
  end
end

-- Everything of a class raised up to the user's watermark of that class is read for the user.
local marks = watermarks_of(KEYS[13], uid)
local function watermark(class) return watermark_in(marks, class) end
-- Above the highest of them nothing is read by watermark: no need to look up a class.
local highest_mark = 0
for _, cursor in pairs(marks) do highest_mark = math.max(highest_mark, cursor) end

-- The classes the user's inboxes are in (their own and their roles', read at poll time).
local visible_classes, class_list = {}, {}
do
  local fields = {}
  for i = FIRST_INBOX, #KEYS do
    fields[#fields + 1] = 'i:' .. string.match(KEYS[i], '.*:inbox:(.*)$')
  end
  if #fields > 0 then
    for _, list in ipairs(redis.call('HMGET', KEYS[10], unpack(fields))) do
      if list then
        for class in string.gmatch(list, '%S+') do
          if not visible_classes[class] then
            visible_classes[class] = true
            class_list[#class_list + 1] = class
          end
        end
      end
    end
  end
end

local function place_of(slot) return place_in(KEYS[11], slot) end

local function live(slot)
  local expires = redis.call('ZSCORE', KEYS[2], slot)
  return expires ~= false and tonumber(expires) > now
end

local function snoozed_by_me(slot) return snoozed(KEYS[16], uid, slot) end

local function marked_by_me(slot) return marked_for(KEYS[3], KEYS[16], uid, slot, now) end

-- The read model's one rule (read_model.lua read_for) for this user.
local function read_by_me(slot, class, raise)
  return read_for(marks, KEYS[3], KEYS[16], uid, slot, class, raise, now)
end

local function is_open(slot)
  return is_open_flag(redis.call('HGET', KEYS[6], slot))
end

local function visible(slot)
  for i = FIRST_INBOX, #KEYS do
    if redis.call('ZSCORE', KEYS[i], slot) then return true end
  end
  return false
end

-- Unread by severity: open ones raised after the watermark in the user's classes, less the
-- user's one-by-one reads of such ones, less those expired and not swept yet. Also returns how
-- many open ones were raised after the watermark (the candidates of a mark all).
-- How many open ones each (class, severity) of the user's holds above their watermark, as
-- unread_counts found them: `latest` reads no range it knows to be empty.
local open_above_mark = {}
local function unread_counts()
  local counts, candidates = {0, 0, 0}, 0
  if #class_list == 0 then return counts, 0 end
  local fields = {}
  for _, class in ipairs(class_list) do
    local from = pad(watermark(class) + 1)
    for level = 0, 2 do
      local head = class .. ':' .. level
      local n = redis.call('ZLEXCOUNT', KEYS[12], '[' .. head .. ':' .. from, '(' .. head .. ';')
      open_above_mark[head] = n
      counts[level + 1] = counts[level + 1] + n
      candidates = candidates + n
      fields[#fields + 1] = uid .. ':' .. head
    end
  end
  local mine = redis.call('HMGET', KEYS[15], unpack(fields))
  for i = 1, #fields do
    if mine[i] then
      local level = (i - 1) % 3 + 1
      counts[level] = counts[level] - tonumber(mine[i])
    end
  end
  -- Expired but not yet swept (the sweep runs every minute, so few): still in the open index.
  -- Bounded: the oldest `expired_scan` of them; more waiting means the sweep is behind, which
  -- /metrics shows (wms_expired_unswept), and is not paid for by every poll.
  local gone = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, expired_scan)
  if #gone > 0 then
    local places = redis.call('HMGET', KEYS[11], unpack(gone))
    local flags = redis.call('HMGET', KEYS[6], unpack(gone))
    local markers = redis.call('HMGET', KEYS[14], unpack(gone))
    for i = 1, #gone do
      local place = places[i]
      if place and is_open_flag(flags[i]) then
        local class, level, raise = place_parts(place)
        if visible_classes[class] and raise > watermark(class)
            and not has_word(markers[i], uid) then
          counts[level + 1] = counts[level + 1] - 1
        end
      end
    end
  end
  return counts, candidates
end

local function add_marker(slot)
  local list = redis.call('HGET', KEYS[14], slot)
  if not has_word(list, uid) then
    redis.call('HSET', KEYS[14], slot, (list or '') .. ' ' .. uid)
  end
end

local reply = {0, 0, 0, 0, 0, 0, 0, 0, 0, ''}
-- Items of the answer: their contents and states are read together at the end (two HMGETs).
local page = {}
local function add(slot, cursor, read)
  page[#page + 1] = slot
  reply[#reply + 1] = cursor
  reply[#reply + 1] = false
  reply[#reply + 1] = read and 1 or 0
  reply[#reply + 1] = false
  reply[#reply + 1] = false
end
local WIDTH = 5
local function fill_page()
  if #page == 0 then return end
  local contents = redis.call('HMGET', KEYS[1], unpack(page))
  local states = redis.call('HMGET', KEYS[7], unpack(page))
  for i = 1, #page do
    reply[HEAD + WIDTH * (i - 1) + 2] = contents[i]
    reply[HEAD + WIDTH * (i - 1) + 4] = states[i]
    reply[HEAD + WIDTH * (i - 1) + 5] = redis.call('ZSCORE', KEYS[16], uid .. ':' .. page[i])
  end
end

local function cursor_of(slot)
  local changed = redis.call('ZSCORE', KEYS[8], slot)
  return changed and text(tonumber(changed)) or slot
end

if op == 'read' then
  local marked = 0
  if ARGV[8] == 'all' then
    local counts, candidates = unread_counts()
    marked = counts[1] + counts[2] + counts[3]
    -- A small "all" is also written one by one (bounded by ARGV[9]), as marks always were.
    if candidates <= tonumber(ARGV[9]) then
      for _, class in ipairs(class_list) do
        local from = pad(watermark(class) + 1)
        for level = 0, 2 do
          local head = class .. ':' .. level
          for _, member in ipairs(redis.call('ZRANGEBYLEX', KEYS[12], '[' .. head .. ':' .. from,
                                             '(' .. head .. ';')) do
            local slot = string.match(member, '(%d+)$')
            local expires = redis.call('ZSCORE', KEYS[2], slot)
            if expires and tonumber(expires) > now and not marked_by_me(slot) then
              redis.call('ZADD', KEYS[3], expires, slot)
              add_marker(slot)
              redis.call('SADD', KEYS[5], uid)
            end
          end
        end
      end
    end
    -- The watermarks: one per class the user sees now, however many notifications there are
    -- (what they see later keeps its own). Classes that are gone are dropped, so the field
    -- stays as small as what the user can see.
    local sequence = tonumber(redis.call('GET', KEYS[9]) or '0')
    local others = {}
    for class in pairs(marks) do
      if class ~= '*' and not visible_classes[class] then others[#others + 1] = class end
    end
    if #others > 0 then
      local exists = redis.call('HMGET', KEYS[10], unpack(others))
      for i, class in ipairs(others) do
        if not exists[i] then marks[class] = nil end
      end
    end
    for _, class in ipairs(class_list) do marks[class] = sequence end
    save_watermarks(KEYS[13], uid, marks)
    -- Counts of one-by-one reads start again in those classes (all is read up to the mark).
    local index = redis.call('HGET', KEYS[15], uid)
    if index then
      for head in string.gmatch(index, '%S+') do
        if visible_classes[string.match(head, '^(.-):%d$')] then
          forget_read_open(KEYS[15], uid, head)
        end
      end
    end
    redis.call('HINCRBY', KEYS[13], 'v:' .. uid, 1)
  elseif #ARGV >= 9 then
    local ids = {}
    for i = 9, #ARGV do ids[#ids + 1] = ARGV[i] end
    for _, slot in ipairs(redis.call('HMGET', KEYS[4], unpack(ids))) do
      -- Ids that are not the user's (or unknown) are ignored, never an error.
      if slot and visible(slot) then
        local expires = redis.call('ZSCORE', KEYS[2], slot)
        local class, level, raise = place_of(slot)
        if expires and tonumber(expires) > now and not read_by_me(slot, class, raise) then
          redis.call('ZADD', KEYS[3], expires, slot)
          add_marker(slot)
          if class and is_open(slot) then bump_read_open(KEYS[15], uid, class .. ':' .. level) end
          marked = marked + 1
        end
      end
    end
    if marked > 0 then
      redis.call('SADD', KEYS[5], uid)
      redis.call('HINCRBY', KEYS[13], 'v:' .. uid, 1)
    end
  end
  reply[2] = marked
end

-- After a mark all nothing open is raised after the watermark: nothing to count again.
local counts = (op == 'read' and ARGV[8] == 'all') and {0, 0, 0} or unread_counts()
reply[1] = counts[1] + counts[2] + counts[3]
reply[3], reply[4], reply[5] = counts[1], counts[2], counts[3]
if version_read then
  reply[6], reply[7], reply[8] = unpack(version_read)
else
  reply[6], reply[7], reply[8] = etag_parts()
end

if op == 'list' then
  local since, limit, include_read = tonumber(ARGV[8]), tonumber(ARGV[9]), ARGV[10] == '1'
  local budget = limit + tonumber(ARGV[11])
  local chunk = limit + 1
  -- Never changed ones come from the inboxes by slot; unread only: those up to the lowest
  -- watermark of the user's classes are read (a re-raised one has changed, so it comes
  -- through the changes zset).
  local floor = since
  if not include_read and #class_list > 0 then
    local lowest
    for _, class in ipairs(class_list) do
      local mark = watermark(class)
      if not lowest or mark < lowest then lowest = mark end
    end
    if lowest > floor then floor = lowest end
  end

  local boxes = {}
  for i = FIRST_INBOX, #KEYS do
    boxes[#boxes + 1] = {key = i, buf = {}, pos = 1, after = '(' .. text(floor), done = false}
  end
  local function head_of(box)
    if box.pos > #box.buf then
      if box.done then return nil end
      box.buf = redis.call('ZRANGEBYSCORE', KEYS[box.key], box.after, '+inf', 'LIMIT', 0, chunk)
      box.pos = 1
      box.done = #box.buf < chunk
      if #box.buf == 0 then return nil end
      box.after = '(' .. box.buf[#box.buf]
    end
    return box.buf[box.pos]
  end
  -- The next slot of the merged inboxes (each once however many inboxes hold it).
  local function next_plain()
    local best, best_n
    for _, box in ipairs(boxes) do
      local h = head_of(box)
      if h then
        local n = tonumber(h)
        if not best_n or n < best_n then best, best_n = h, n end
      end
    end
    if not best then return nil end
    for _, box in ipairs(boxes) do
      if head_of(box) == best then box.pos = box.pos + 1 end
    end
    return best, best_n
  end

  local changes = {buf = {}, pos = 1, after = '(' .. ARGV[8], done = false}
  -- The next change after `since`: slot, new cursor (text), new cursor (number).
  local function next_change()
    if changes.pos > #changes.buf then
      if changes.done then return nil end
      changes.buf = redis.call('ZRANGEBYSCORE', KEYS[8], changes.after, '+inf', 'WITHSCORES',
                               'LIMIT', 0, chunk)
      changes.pos = 1
      changes.done = #changes.buf < 2 * chunk
      if #changes.buf == 0 then return nil end
      changes.after = '(' .. text(tonumber(changes.buf[#changes.buf]))
    end
    local slot, score = changes.buf[changes.pos], tonumber(changes.buf[changes.pos + 1])
    changes.pos = changes.pos + 2
    return slot, text(score), score
  end

  local next_since = ARGV[8]
  local a, a_n = next_plain()
  local b, b_cursor, b_n = next_change()
  local emitted, looked, reached = 0, 0, nil
  while emitted < limit and (a or b) do
    if looked >= budget then
      -- Looked far enough for one call: say how far, so the next call goes on from there.
      next_since = reached
      break
    end
    looked = looked + 1
    if b == nil or (a ~= nil and a_n < b_n) then
      reached = a
      -- Unchanged ones: open, never changed; shown unless expired (or read, when unread only).
      if not redis.call('ZSCORE', KEYS[8], a) and live(a) then
        local read
        if a_n > highest_mark then read = marked_by_me(a) else read = read_by_me(a, place_of(a), a_n) end
        if include_read or not read then
          add(a, a, read)
          emitted = emitted + 1
          next_since = a
        end
      end
      a, a_n = next_plain()
    else
      reached = b_cursor
      -- Changed ones: shown read or not, so clients replace their copy; but one the user
      -- snoozed has left their default list until it wakes (waking gives it a new cursor).
      if visible(b) and live(b) and (include_read or not snoozed_by_me(b)) then
        local class, _, raise = place_of(b)
        add(b, b_cursor, read_by_me(b, class, raise))
        emitted = emitted + 1
        next_since = b_cursor
      end
      b, b_cursor, b_n = next_change()
    end
  end
  reply[2] = next_since
  -- Stopped before the newest change (the page is full, or it ended early to bound its work):
  -- the client is not caught up, and asks again from next_since.
  reply[9] = (a or b) and 1 or 0
  local oldest
  if ARGV[12] == '1' then
    for i = FIRST_INBOX, #KEYS do
      local first = redis.call('ZRANGE', KEYS[i], 0, 0)[1]
      if first and (not oldest or tonumber(first) < tonumber(oldest)) then oldest = first end
    end
  end
  reply[10] = oldest or ''
elseif op == 'latest' then
  -- Newest raised first: each (class, severity) of the open index, from the top down to the
  -- watermark, merged; skipping the ones read one by one or expired.
  local want = tonumber(ARGV[8])
  local chunk = want + 4
  local lists = {}
  for _, class in ipairs(class_list) do
    local from = pad(watermark(class) + 1)
    for level = 0, 2 do
      local head = class .. ':' .. level
      -- The same range unread_counts counted (no writes since): none there, nothing to read.
      if (open_above_mark[head] or 1) > 0 then
        lists[#lists + 1] = {buf = {}, pos = 1, top = '(' .. head .. ';', bottom = '[' .. head .. ':' .. from,
                             done = false}
      end
    end
  end
  local function head_of(list)
    if list.pos > #list.buf then
      if list.done then return nil end
      list.buf = redis.call('ZREVRANGEBYLEX', KEYS[12], list.top, list.bottom, 'LIMIT', 0, chunk)
      list.pos = 1
      list.done = #list.buf < chunk
      if #list.buf == 0 then return nil end
      list.top = '(' .. list.buf[#list.buf]
    end
    return list.buf[list.pos]
  end
  local looked = 0
  while want > 0 and looked < 200 + 4 * tonumber(ARGV[8]) do
    local best, best_raise, best_list
    for _, list in ipairs(lists) do
      local member = head_of(list)
      if member then
        local raise = string.match(member, ':(%d+):%d+$')
        if not best_raise or raise > best_raise then best, best_raise, best_list = member, raise, list end
      end
    end
    if not best then break end
    best_list.pos = best_list.pos + 1
    looked = looked + 1
    local slot = string.match(best, '(%d+)$')
    if live(slot) and not marked_by_me(slot) then
      add(slot, cursor_of(slot), false)
      want = want - 1
    end
  end
elseif op == 'snoozed' then
  -- Bounded by how many the user snoozed (and ARGV[8]).
  local found = {}
  for slot in string.gmatch(redis.call('HGET', KEYS[17], 'u:' .. uid) or '', '%S+') do
    local wakes = redis.call('ZSCORE', KEYS[16], uid .. ':' .. slot)
    if wakes and live(slot) and visible(slot) then found[#found + 1] = {tonumber(wakes), slot} end
  end
  table.sort(found, function(x, y) return x[1] < y[1] end)
  for i = 1, math.min(#found, tonumber(ARGV[8])) do add(found[i][2], cursor_of(found[i][2]), true) end
end
fill_page()
return reply
