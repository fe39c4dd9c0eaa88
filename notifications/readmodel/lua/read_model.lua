-- The read model's prelude (docs/architecture/read-model.md): the only definitions of what is live,
-- visible, read for a user, the cursor of a change and the unread tallies. The loader puts it
-- in front of every read-model script (config/lua_compose.py, "read_model"); no script copies
-- a helper. No writes of its own at load time.
-- KEYS[1..23] a warehouse's keys, at the positions of K below in every script that takes this
--          prelude (notifications/readmodel/layout.py WAREHOUSE builds them in this order);
--          a script's own KEYS start at KEYS[FIRST_OWN].
-- ARGV[1] now, ms since the epoch, in every script that takes this prelude; a script's own
--          ARGV start at ARGV[2].
-- Returns nothing: it defines the layout and local functions for the script that follows it.
--
-- Names used below:
--   slot    the cursor a notification was published with: its identity in every hash
--   place   "<class>:<severity digit>:<raise cursor, 16 digits>" (places, per slot)
--   head    "<class>:<severity digit>" (one range of the open index)
--   marks   a user's "mark all read" watermarks (users, field <user id>): "<class>=<cursor> ..."
--           everything of that class raised up to the cursor is read for the user; "*=<cursor>"
--           (or a plain number) covers every class
--   own     a user's field of one slot (reads, field "<user id>:<slot>"): "<raise cursor>" read
--           one by one while raised at that cursor (a later raise outdates it), or "w<cursor>"
--           woken at that cursor (a "mark all read" before it does not cover it: SPEC 13)

local K = {seq = 1, notes = 2, ids = 3, routes = 4, expiry = 5, flags = 6, states = 7,
           changes = 8, history = 9, escalations = 10, reminders = 11, classes = 12,
           places = 13, open = 14, users = 15, reads = 16, snoozes = 17, report = 18,
           claim_ms = 19, resolve_ms = 20, silenced = 21, noise_hours = 22, raised_keys = 23}
local FIRST_OWN = 24
local NOW = tonumber(ARGV[1])
local SEVERITIES = {'info', 'warning', 'critical'}
local LEVEL = {info = 0, warning = 1, critical = 2}
local LETTER = {open = 'o', claimed = 'c', resolved = 'r'}
-- An open alert a planned silence holds back (SPEC 17) has the flag letter 's': it is not
-- open for the counts (is_open_flag), but its status is "open" (its state says `silenced`).
local SILENCED = 's'

local function flag_of(state)
  local letter = (state.status == 'open' and state.silenced) and SILENCED or LETTER[state.status]
  return letter .. LEVEL[state.severity]
end

-- A user's mute floor (users field "q:<user>", "<until ms> <severity digit>", SPEC 17): alerts
-- below that severity are not unread for them while it lasts; 0 when none is active. Also
-- returns when the active one ends (nil when none).
local function mute_floor(raw)
  if not raw then return 0 end
  local ends, floor = string.match(raw, '^(%d+) (%d)$')
  if not ends or tonumber(ends) <= NOW then return 0 end
  return tonumber(floor), tonumber(ends)
end

local function pad(n) return string.format('%016.0f', n) end
local function text(n) return string.format('%.0f', n) end

-- --- Word lists (" 3 7 12") kept in hash fields ---------------------------------------------

local function has_word(list, word)
  return list ~= false and list ~= nil
    and string.find(' ' .. list .. ' ', ' ' .. word .. ' ', 1, true) ~= nil
end

local function add_word(hash_key, field, word)
  local list = redis.call('HGET', hash_key, field)
  if not has_word(list, word) then redis.call('HSET', hash_key, field, (list or '') .. ' ' .. word) end
end

local function remove_word(hash_key, field, word)
  local list = redis.call('HGET', hash_key, field)
  if not has_word(list, word) then return end
  local rest = string.gsub(' ' .. list .. ' ', ' ' .. string.gsub(word, '%p', '%%%0') .. ' ', ' ')
  rest = string.match(rest, '^%s*(.-)%s*$')
  if rest == '' then redis.call('HDEL', hash_key, field) else redis.call('HSET', hash_key, field, ' ' .. rest) end
end

local function words(list)
  local found = {}
  for word in string.gmatch(list or '', '%S+') do found[#found + 1] = word end
  return found
end

-- --- Reading a range a chunk at a time ---------------------------------------------------------

-- A pager over one sorted-set range: `fetch(from)` returns up to `chunk` entries from `from`
-- on; after each chunk `from` becomes "(<its last entry>" (exclusive, for score and lex
-- ranges alike). A pager made with its entries and done = true serves a list built in Lua.
local function pager(fetch, from, chunk)
  return {fetch = fetch, from = from, chunk = chunk, buf = {}, pos = 1, done = false}
end

-- The pager's next entry (the caller moves `pos` on when it takes it), nil at the end.
local function head_of(p)
  if p.pos > #p.buf then
    if p.done then return nil end
    p.buf = p.fetch(p.from)
    p.pos = 1
    p.done = #p.buf < p.chunk
    if #p.buf == 0 then return nil end
    p.from = '(' .. p.buf[#p.buf]
  end
  return p.buf[p.pos]
end

-- --- What a notification is -------------------------------------------------------------------

-- Stored and not expired (expired ones are never shown, swept or not).
local function live(slot)
  local expires = redis.call('ZSCORE', KEYS[K.expiry], slot)
  return expires ~= false and tonumber(expires) > NOW
end

-- In one of KEYS[first..] (the inboxes a user sees: their own, then one per role).
local function visible(slot, first)
  for i = first, #KEYS do
    if redis.call('ZSCORE', KEYS[i], slot) then return true end
  end
  return false
end

-- The cursor of its latest change, or its slot.
local function cursor_of(slot)
  local changed = redis.call('ZSCORE', KEYS[K.changes], slot)
  return changed and text(tonumber(changed)) or slot
end

local function is_open_flag(flag)
  return not flag or string.byte(flag, 1) == 111 -- 'o'
end

local function is_open(slot) return is_open_flag(redis.call('HGET', KEYS[K.flags], slot)) end

-- class (text), severity digit (number), raise cursor (number) of a place.
local function place_parts(place)
  local class, level, raise = string.match(place, '^(.-):(%d):(%d+)$')
  return class, tonumber(level), tonumber(raise)
end

local function make_place(class, level, raise) return class .. ':' .. level .. ':' .. pad(raise) end

-- class, severity digit, raise cursor of a slot (nil class and level 0: published before the
-- read model; its raise cursor is its slot).
local function place_of(slot)
  local place = redis.call('HGET', KEYS[K.places], slot)
  if not place then return nil, 0, tonumber(slot) end
  return place_parts(place)
end

local function state_of(slot)
  local raw = redis.call('HGET', KEYS[K.states], slot)
  if raw then return cjson.decode(raw) end
  local flag = redis.call('HGET', KEYS[K.flags], slot) or 'o0'
  return {status = 'open', severity = SEVERITIES[tonumber(string.sub(flag, 2, 2)) + 1],
          claimed_by = cjson.null, claimed_at = cjson.null, resolved_by = cjson.null,
          resolved_at = cjson.null, escalated_at = cjson.null, occurrences = 1}
end

-- A new cursor, strictly increasing per warehouse and time-ordered: now_ms * 1024 leaves room
-- for 1024 per millisecond (notifications.readmodel.CURSOR_PER_MS; a contract test pins it).
local function take_cursor()
  local last = tonumber(redis.call('GET', KEYS[K.seq]) or '0')
  local cursor = text(math.max(last + 1, NOW * 1024))
  redis.call('SET', KEYS[K.seq], cursor)
  return cursor
end

-- Tells open streams of a cursor (notifications/keys.py, "Events for open streams"): the
-- channel is the sequence key's name with ":events" for ":seq".
local function tell_streams(payload)
  redis.call('PUBLISH', (string.gsub(KEYS[K.seq], ':seq$', ':events')), payload)
end

-- A change of `slot`: a new cursor in changes, told to open streams with its route.
local function next_cursor(slot)
  local cursor = take_cursor()
  redis.call('ZADD', KEYS[K.changes], cursor, slot)
  tell_streams(cursor .. ' ' .. (redis.call('HGET', KEYS[K.routes], slot) or ''))
  return cursor
end

local function record(slot, entry)
  local encoded = cjson.encode(entry)
  local before = redis.call('HGET', KEYS[K.history], slot)
  redis.call('HSET', KEYS[K.history], slot, before and (before .. ',' .. encoded) or encoded)
end

-- The class id of a set of inboxes (sorted, joined by spaces): the first 12 hex digits of its
-- SHA-1, as notifications.readmodel.route_class computes it for publishing (a contract test
-- pins the pair).
local function class_of(members)
  table.sort(members)
  local joined = table.concat(members, ' ')
  return string.sub(redis.sha1hex(joined), 1, 12), joined
end

local function enter_class(class, members)
  if redis.call('HSETNX', KEYS[K.classes], class, members) == 1 then
    for member in string.gmatch(members, '%S+') do add_word(KEYS[K.classes], 'i:' .. member, class) end
  end
  redis.call('HINCRBY', KEYS[K.classes], 'n:' .. class, 1)
end

local function leave_class(class)
  if redis.call('HINCRBY', KEYS[K.classes], 'n:' .. class, -1) > 0 then return end
  for member in string.gmatch(redis.call('HGET', KEYS[K.classes], class) or '', '%S+') do
    remove_word(KEYS[K.classes], 'i:' .. member, class)
  end
  redis.call('HDEL', KEYS[K.classes], class, 'n:' .. class, 'm:' .. class)
end

-- The classes the inboxes KEYS[first..] are in: a set and a list.
local function classes_seen(first)
  local seen, list = {}, {}
  local fields = {}
  for i = first, #KEYS do fields[#fields + 1] = 'i:' .. string.match(KEYS[i], '.*:inbox:(.*)$') end
  if #fields == 0 then return seen, list end
  for _, found in ipairs(redis.call('HMGET', KEYS[K.classes], unpack(fields))) do
    for class in string.gmatch(found or '', '%S+') do
      if not seen[class] then
        seen[class] = true
        list[#list + 1] = class
      end
    end
  end
  return seen, list
end

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
  local answer = {}
  if #users == 0 then return answer end
  local owns, members = {}, {}
  for i, user in ipairs(users) do
    owns[i] = user .. ':' .. slot
    members[i] = user .. ':' .. slot
  end
  local marks = redis.call('HMGET', KEYS[K.users], unpack(users))
  local own = redis.call('HMGET', KEYS[K.reads], unpack(owns))
  local snoozed = redis.call('ZMSCORE', KEYS[K.snoozes], unpack(members))
  for i, user in ipairs(users) do
    answer[user] = read_by(parse_marks(marks[i]), class, raise, own[i] or nil, snoozed[i] ~= false)
  end
  return answer
end

-- --- Counting without scanning ------------------------------------------------------------------
-- Unread of a user, per severity = open ones of the classes they see - the open ones of those
-- classes they have read. Both are kept at write time, so a poll reads them and counts nothing:
--   per class (classes field "o:<class>"): "<info> <warning> <critical>" open ones not yet
--     swept, how many of its newest open ones are listed, then those, "<raise, 16 digits>:
--     <level>:<slot>" newest raised first: the NEWEST newest, or fewer (never fewer than
--     NEWEST / 2 while the class has more), always every open one raised after the last
--     listed one's raise;
--   per user (users field "r:<user>"): " <class>:<level>=<n> ...": how many open ones of each
--     class and severity are read for them (read_by).
-- Whose count a change of a slot moves: users with a field or snooze of it (its "who" list in
-- reads) and users whose watermark of its class may cover it (classes field "m:<class>": who
-- has a watermark of the class); for anyone else an open one is unread.

local NEWEST = 24

-- A class's state: {counts = {info, warning, critical}, listed = how many newest are listed,
-- rest = the listed entries, space-separated}. The field is "<info> <warning> <critical>
-- <listed> <entry> ...": its entries are only split where a caller needs them.
local function parse_open(raw)
  if not raw then return {counts = {0, 0, 0}, listed = 0, rest = ''} end
  local info, warning, critical, listed, rest = string.match(raw, '^(%d+) (%d+) (%d+) (%d+) ?(.*)$')
  return {counts = {tonumber(info), tonumber(warning), tonumber(critical)}, listed = tonumber(listed),
          rest = rest}
end

local function open_total(state) return state.counts[1] + state.counts[2] + state.counts[3] end

local function open_state(class) return parse_open(redis.call('HGET', KEYS[K.classes], 'o:' .. class)) end

local function save_open(class, state)
  if open_total(state) == 0 then
    redis.call('HDEL', KEYS[K.classes], 'o:' .. class)
  else
    local raw = table.concat(state.counts, ' ') .. ' ' .. state.listed
    if state.rest ~= '' then raw = raw .. ' ' .. state.rest end
    redis.call('HSET', KEYS[K.classes], 'o:' .. class, raw)
  end
end

-- The per-class state of each of `class_list` (one read): {class = state}.
local function open_states(class_list)
  local found = {}
  if #class_list == 0 then return found end
  local fields = {}
  for i, class in ipairs(class_list) do fields[i] = 'o:' .. class end
  for i, raw in ipairs(redis.call('HMGET', KEYS[K.classes], unpack(fields))) do
    found[class_list[i]] = parse_open(raw or nil)
  end
  return found
end

local function newest_entry(raise, level, slot) return pad(raise) .. ':' .. level .. ':' .. slot end

-- The class's NEWEST newest open ones, from the open index: listed count, entries.
local function newest_open(class)
  local found = {}
  for level = 0, 2 do
    local head = class .. ':' .. level
    for _, member in ipairs(redis.call('ZREVRANGEBYLEX', KEYS[K.open], '(' .. head .. ';',
                                       '[' .. head .. ':', 'LIMIT', 0, NEWEST)) do
      local raise, slot = string.match(member, ':(%d+):(%d+)$')
      found[#found + 1] = raise .. ':' .. level .. ':' .. slot
    end
  end
  table.sort(found, function(x, y) return x > y end)
  for i = #found, NEWEST + 1, -1 do found[i] = nil end
  return #found, table.concat(found, ' ')
end

-- An open notification enters the open index at `place` (publish, or a change to open).
local function open_enter(place, slot)
  redis.call('ZADD', KEYS[K.open], 0, place .. ':' .. slot)
  local class, level, raise = place_parts(place)
  local state = open_state(class)
  local total = open_total(state)
  state.counts[level + 1] = state.counts[level + 1] + 1
  local entry = newest_entry(raise, level, slot)
  if state.listed == 0 then
    -- Nothing listed: the class had none open (the list is refilled before it runs out).
    if total == 0 then state.rest, state.listed = entry, 1 end
  elseif entry > string.match(state.rest, '^%S+') then
    -- The newest (a publish, a raise): first.
    state.rest = entry .. ' ' .. state.rest
    state.listed = state.listed + 1
  elseif state.listed == total or entry > string.match(state.rest, '(%S+)$') then
    -- Among the listed ones (a release of an older one): in its place.
    local list = words(state.rest)
    local at = #list + 1
    while at > 1 and list[at - 1] < entry do at = at - 1 end
    table.insert(list, at, entry)
    state.rest = table.concat(list, ' ')
    state.listed = state.listed + 1
  end
  if state.listed > NEWEST then
    state.rest = string.match(state.rest, '^(.*) %S+$')
    state.listed = NEWEST
  end
  save_open(class, state)
end

-- An open notification at `place` leaves the open index (a change, or the sweep).
local function open_leave(place, slot)
  redis.call('ZREM', KEYS[K.open], place .. ':' .. slot)
  local class, level, raise = place_parts(place)
  local state = open_state(class)
  state.counts[level + 1] = state.counts[level + 1] - 1
  local entry = newest_entry(raise, level, slot)
  local rest = state.rest
  -- Where it is in " <rest> ": the spaces before and after it.
  local before, after = string.find(' ' .. rest .. ' ', ' ' .. entry .. ' ', 1, true)
  if before then
    local head = before > 1 and string.sub(rest, 1, before - 2) or ''
    local tail = string.sub(rest, after)
    state.rest = (head ~= '' and tail ~= '') and (head .. ' ' .. tail) or (head .. tail)
    state.listed = state.listed - 1
  end
  if state.listed < NEWEST / 2 and state.listed < open_total(state) then
    state.listed, state.rest = newest_open(class)
  end
  save_open(class, state)
end

-- A user's counts: {"<class>:<level>" = n}.
local function parse_counts(raw)
  local counts = {}
  for head, n in string.gmatch(raw or '', '(%S+)=(%-?%d+)') do counts[head] = tonumber(n) end
  return counts
end

local function format_counts(counts)
  local parts = {}
  for head, n in pairs(counts) do
    if n ~= 0 then parts[#parts + 1] = head .. '=' .. text(n) end
  end
  table.sort(parts)
  return table.concat(parts, ' ')
end

-- Adds deltas[i] to the count of `head` of users[i] (three calls, however many users).
local function add_counts(users, deltas, head)
  local moved, fields = {}, {}
  for i, user in ipairs(users) do
    if deltas[i] ~= 0 then
      moved[#moved + 1] = i
      fields[#fields + 1] = 'r:' .. user
    end
  end
  if #fields == 0 then return end
  local raws = redis.call('HMGET', KEYS[K.users], unpack(fields))
  local set, gone = {}, {}
  for j, i in ipairs(moved) do
    local counts = parse_counts(raws[j] or nil)
    counts[head] = (counts[head] or 0) + deltas[i]
    local raw = format_counts(counts)
    if raw == '' then gone[#gone + 1] = fields[j] else
      set[#set + 1] = fields[j]
      set[#set + 1] = raw
    end
  end
  if #set > 0 then redis.call('HSET', KEYS[K.users], unpack(set)) end
  if #gone > 0 then redis.call('HDEL', KEYS[K.users], unpack(gone)) end
end

-- Who has a field or a snooze of the slot.
local function who(slot) return words(redis.call('HGET', KEYS[K.reads], slot)) end

-- An open notification at `place` enters (sign 1) or leaves (sign -1) the counts of every user
-- it is read for.
local function tally(slot, place, sign)
  local class, level, raise = place_parts(place)
  local users, listed = who(slot), {}
  for _, user in ipairs(users) do listed[user] = true end
  for _, user in ipairs(words(redis.call('HGET', KEYS[K.classes], 'm:' .. class))) do
    if not listed[user] then
      listed[user] = true
      users[#users + 1] = user
    end
  end
  if #users == 0 then return end
  local read = read_by_users(users, slot, class, raise)
  local deltas = {}
  for i, user in ipairs(users) do deltas[i] = read[user] and sign or 0 end
  add_counts(users, deltas, class .. ':' .. level)
end

-- Runs change() (which changes only `user`'s state of `slot`), keeping their count exact.
local function for_user(user, slot, change)
  local place = redis.call('HGET', KEYS[K.places], slot)
  local counted = place and is_open(slot)
  local class, level, raise, marks, before
  if counted then
    class, level, raise = place_parts(place)
    marks = marks_of(user)
    before = is_read(user, slot, marks, class, raise)
  end
  change()
  add_word(KEYS[K.reads], slot, user)
  if counted then
    local after = is_read(user, slot, marks, class, raise)
    if after ~= before then add_counts({user}, {after and 1 or -1}, class .. ':' .. level) end
  end
end

-- Marked read one by one by `user` (as raised now).
local function mark(user, slot)
  for_user(user, slot, function()
    local _, _, raise = place_of(slot)
    redis.call('HSET', KEYS[K.reads], user .. ':' .. slot, text(raise))
    remove_word(KEYS[K.users], 'w:' .. user, slot)
  end)
  redis.call('HINCRBY', KEYS[K.users], 'v:' .. user, 1)
end

local function snooze(user, slot, wakes)
  for_user(user, slot, function()
    redis.call('ZADD', KEYS[K.snoozes], wakes, user .. ':' .. slot)
    add_word(KEYS[K.users], 's:' .. user, slot)
  end)
  redis.call('HINCRBY', KEYS[K.users], 'v:' .. user, 1)
end

local function drop_snooze(user, slot)
  redis.call('ZREM', KEYS[K.snoozes], user .. ':' .. slot)
  remove_word(KEYS[K.users], 's:' .. user, slot)
end

-- Ends `user`'s snooze of `slot`: unread for them from `cursor` on, whatever watermark they had
-- (SPEC 13), until they read it or mark all read again. `by`: who woke it (cjson.null for
-- time or the system). Without a cursor the slot is being raised again (out of the counts,
-- every user's field about to go): only the snooze goes.
local function wake(user, slot, by, cursor)
  local function change()
    drop_snooze(user, slot)
    redis.call('HSET', KEYS[K.reads], user .. ':' .. slot, 'w' .. cursor)
    add_word(KEYS[K.users], 'w:' .. user, slot)
  end
  if cursor then for_user(user, slot, change) else drop_snooze(user, slot) end
  redis.call('HINCRBY', KEYS[K.users], 'v:' .. user, 1)
  record(slot, {event = 'woke', at = NOW, by = by})
end

-- Every snooze of the slot wakes (a re-raise, an escalation, a release).
local function wake_all(slot, cursor)
  for _, user in ipairs(who(slot)) do
    if snooze_of(user, slot) then wake(user, slot, cjson.null, cursor) end
  end
end

-- Every user's field of the slot goes (a raise, or the sweep), with their lists' entries.
-- Returns how many fields went.
local function forget_reads(slot)
  local removed = 0
  for _, user in ipairs(who(slot)) do
    removed = removed + redis.call('HDEL', KEYS[K.reads], user .. ':' .. slot)
    remove_word(KEYS[K.users], 'w:' .. user, slot)
  end
  redis.call('HDEL', KEYS[K.reads], slot)
  return removed
end

-- --- What a poll reads first ------------------------------------------------------------------

-- The version of a user's view (what its ETag depends on besides the user, the query and the
-- format: the sequence, the next expiry or the end of their active mute, whichever comes
-- first, so an ETag outlives neither; the user's read version) and their own state of the
-- warehouse, in three reads: {version, expired (some are expired and not yet swept), marks,
-- woken (slots), snoozes (whether they have any), read_counts (their counts)}.
local function user_view(user)
  local sequence = redis.call('GET', KEYS[K.seq]) or '0'
  local first = redis.call('ZRANGE', KEYS[K.expiry], 0, 0, 'WITHSCORES')
  local expired, next_expiry = false, ''
  if first[2] and tonumber(first[2]) > NOW then
    next_expiry = text(tonumber(first[2]))
  elseif first[2] then
    expired = true
    local later = redis.call('ZRANGEBYSCORE', KEYS[K.expiry], '(' .. text(NOW), '+inf',
                             'WITHSCORES', 'LIMIT', 0, 1)
    next_expiry = later[2] and text(tonumber(later[2])) or ''
  end
  local own = redis.call('HMGET', KEYS[K.users], 'v:' .. user, user, 'w:' .. user, 's:' .. user, 'r:' .. user,
                         'q:' .. user)
  local floor, mute_ends = mute_floor(own[6] or nil)
  if mute_ends and (next_expiry == '' or mute_ends < tonumber(next_expiry)) then
    next_expiry = text(mute_ends)
  end
  return {version = {sequence, next_expiry, own[1] or '0'}, expired = expired,
          marks = parse_marks(own[2] or nil), woken = words(own[3] or nil),
          snoozes = own[4] ~= false, read_counts = parse_counts(own[5] or nil),
          floor = floor}
end

local function view_version(user) return user_view(user).version end

-- Unread by severity of a user (`view`: user_view) seeing the classes `class_list` / `seen`
-- (`states`: open_states of them), less what expired and is not swept yet (at most
-- `expired_scan` of those looked at). Also returns the expired ones looked at, as a set, and
-- whether that is all of them.
local function unread_counts(user, view, seen, class_list, states, expired_scan)
  local counts = {0, 0, 0}
  for _, class in ipairs(class_list) do
    local state = states[class]
    for level = 0, 2 do
      counts[level + 1] = counts[level + 1] + state.counts[level + 1] - (view.read_counts[class .. ':' .. level] or 0)
    end
  end
  for level = 1, view.floor do counts[level] = 0 end -- muted below the floor
  local gone_set = {}
  if not view.expired then return counts, gone_set, true end
  -- Expired but not yet swept (the sweep runs every minute, so few): still counted open.
  -- Bounded: the oldest `expired_scan` of them; more waiting means the sweep is behind, which
  -- /metrics shows (wms_expired_unswept), and is not paid for by every poll.
  local gone = redis.call('ZRANGEBYSCORE', KEYS[K.expiry], '-inf', NOW, 'LIMIT', 0, expired_scan)
  if #gone > 0 then
    local places = redis.call('HMGET', KEYS[K.places], unpack(gone))
    local flags = redis.call('HMGET', KEYS[K.flags], unpack(gone))
    local owns = {}
    for i, slot in ipairs(gone) do
      owns[i] = user .. ':' .. slot
      gone_set[slot] = true
    end
    local own = redis.call('HMGET', KEYS[K.reads], unpack(owns))
    local snoozed = redis.call('ZMSCORE', KEYS[K.snoozes], unpack(owns))
    for i = 1, #gone do
      if places[i] and is_open_flag(flags[i]) then
        local class, level, raise = place_parts(places[i])
        if seen[class] and level >= view.floor
           and not read_by(view.marks, class, raise, own[i] or nil, snoozed[i] ~= false) then
          counts[level + 1] = counts[level + 1] - 1
        end
      end
    end
  end
  return counts, gone_set, #gone < tonumber(expired_scan)
end

-- --- One notification as a reply -------------------------------------------------------------
-- Every reply that carries notifications gives, per notification, these ITEM fields in this
-- order (notifications/readmodel/replies.py ITEM decodes them by name).
local ITEM = 5

local function item_of(slot, cursor, read, user)
  return {cursor or cursor_of(slot), redis.call('HGET', KEYS[K.notes], slot), read and 1 or 0,
          redis.call('HGET', KEYS[K.states], slot) or false,
          (user ~= '' and snooze_of(user, slot)) or false}
end

-- The item of `slot` as `user` sees it ("" for nobody: read 0).
local function item_for(slot, user, cursor)
  local read = false
  if user ~= '' then
    local class, _, raise = place_of(slot)
    read = is_read(user, slot, marks_of(user), class, raise)
  end
  return item_of(slot, cursor, read, user)
end

local function append(reply, values)
  for _, value in ipairs(values) do reply[#reply + 1] = value end
  return reply
end

-- --- Changes of status (the alert lifecycle, SPEC 7) ------------------------------------------

-- Records the event, gives the slot a new cursor and writes its new state, keeping the open
-- index and the tallies exact (invariants 1 and 2 of docs/architecture/read-model.md). `how`:
-- `raise` (a re-raise, an escalation): a new raise cursor, every snooze woken and every user's
-- read of it outdated (unread again for everyone); `class`, `members`: the inboxes it is in
-- now (an escalation; the caller wrote its route before, so the event reaches them).
local function change(slot, state, event, by, how)
  how = how or {}
  record(slot, {event = event, at = NOW, by = by})
  local cursor = next_cursor(slot)
  local old = redis.call('HGET', KEYS[K.places], slot)
  if old and is_open(slot) then
    open_leave(old, slot)
    tally(slot, old, -1)
  end
  if how.raise then
    wake_all(slot, nil)
    forget_reads(slot)
  end
  if old then
    local class, _, raise = place_parts(old)
    if how.class and how.class ~= class then
      enter_class(how.class, how.members)
      leave_class(class)
      class = how.class
    end
    if how.raise then raise = tonumber(cursor) end
    local place = make_place(class, LEVEL[state.severity], raise)
    redis.call('HSET', KEYS[K.places], slot, place)
    if state.status == 'open' and not state.silenced then
      open_enter(place, slot)
      tally(slot, place, 1)
    end
  end
  if state.status ~= 'open' then state.silenced, state.silence = nil, nil end
  redis.call('HSET', KEYS[K.states], slot, cjson.encode(state))
  redis.call('HSET', KEYS[K.flags], slot, flag_of(state))
  return cursor
end

-- The manager's report: per-day counts, and samples of time to claim and to resolve.
-- `retention` ms, `most` samples kept per list.
local function count(type_code, event, retention)
  redis.call('HINCRBY', KEYS[K.report], type_code .. '|' .. event, 1)
  redis.call('PEXPIRE', KEYS[K.report], retention)
end

local function sample(key, type_code, ms, retention, most)
  redis.call('RPUSH', key, type_code .. ' ' .. text(ms))
  redis.call('LTRIM', key, 0, most - 1)
  redis.call('PEXPIRE', key, retention)
end

local function content_of(slot) return cjson.decode(redis.call('HGET', KEYS[K.notes], slot)) end

-- The acting user of a change: {id, username}, or cjson.null for the system ("" id).
local function actor_of(id, username)
  if id == '' then return cjson.null end
  return {id = tonumber(id), username = username}
end

-- A change's answer: {code, the ITEM fields of the slot as `user` sees it, extra}.
local function answer(code, slot, user, cursor, extra)
  local reply = append({code}, item_for(slot, user, cursor))
  reply[#reply + 1] = extra or false
  return reply
end

-- A claimed one open again (released by its holder or by the system): every snooze wakes.
-- `event`: its history event (default `released`).
local function reopen(slot, state, by, user, event)
  state.status = 'open'
  state.claimed_by = cjson.null
  state.claimed_at = cjson.null
  local cursor = change(slot, state, event or 'released', by)
  wake_all(slot, cursor)
  return answer('ok', slot, user, cursor)
end

-- --- A user's view: the ETag short-cut --------------------------------------------------------

-- The ETag of an answer at `version`: the text notifications/api/etags.py hashes (its
-- `before`, the version joined by "|", its `after`), as Python computes it (a contract test
-- pins the pair).
local function etag_of(before, version, after)
  return string.sub(redis.sha1hex(before .. table.concat(version, '|') .. after), 1, 24)
end

-- A view's answer starts with these values (notifications/readmodel/replies.py VIEW_HEAD):
-- what it is ("not modified" when the client's ETag is still the answer's), the unread count,
-- per severity, then the version its ETag is made of.
local function view_head(status, counts, version)
  return {status, counts[1] + counts[2] + counts[3], counts[1], counts[2], counts[3],
          version[1], version[2], version[3]}
end

-- The user's view (user_view), and "not modified" when one of the client's ETags (`tags`, their
-- hex space separated; `before` and `after` the rest of the ETag's text) is still the answer's:
-- three reads, and the answer is the client's copy. One that is not goes on in this same call.
local function check_etag(user, before, after, tags)
  local view = user_view(user)
  if tags ~= '' and has_word(tags, etag_of(before, view.version, after)) then
    return view_head('not modified', {0, 0, 0}, view.version)
  end
  return nil, view
end

-- --- Silences and mutes ------------------------------------------------------------------------
-- SPEC 17. A planned silence holds an alert back when it is published or raised again: it is
-- stored and listed with `silenced` in its state and the flag letter 's' (out of the open index,
-- so no tallies, not unread for anyone, not reminded or escalated), and listed in `silenced`
-- under its silence until that ends (unsilence.lua). A mute is read at poll time (mute_floor,
-- in user_view and unread_counts): no tallies to fix when it ends.

-- Holds back `slot` (already out of the open index) under silence `silence`: its state says so.
local function hold_back(slot, state, silence, type_code, retention)
  state.silenced = true
  state.silence = tonumber(silence)
  redis.call('ZADD', KEYS[K.silenced], 0, silence .. ':' .. slot)
  redis.call('ZREM', KEYS[K.escalations], slot)
  record(slot, {event = 'silenced', at = NOW, by = cjson.null, silence = tonumber(silence)})
  count(type_code, 'silenced', retention)
end

-- --- Noise budget ---
-- SPEC 17: for each user and warehouse, a non-critical alert beyond NOISE_BUDGET_PER_HOUR
-- alerts in the past hour (the alerts the user could see, raised less than an hour before it)
-- comes quietly to that user: listed and unread, but no push, sound or reminder.
-- Users see alerts through classes (sets of inboxes), so nothing is counted per user at write
-- time. Instead, each raise (publish, re-raise, escalation) records:
--   classes field "q": the warehouse's recent raises, " <raise cursor>:<class> ..." oldest
--     first, those less than an hour before the newest raise, at most NOISE_KEEP per class;
--   places field "q:<slot>": its snapshot, " <class>=<n> ...": how many raises each class had
--     in the hour before this raise (at most NOISE_KEEP each; no field when there were none,
--     or when it is critical: a critical alert is never quiet; only an escalation, which is a
--     raise, changes a severity).
-- For a user seeing the classes `seen`, the alert is quiet when those counts of their classes
-- add up to the budget or more: frozen at its raise, so the same answer on every poll, event
-- and push (as long as the user sees the same classes). The budget is at most NOISE_KEEP.

local NOISE_KEEP = 100
local NOISE_WINDOW = 3600000 * 1024 -- an hour, in cursor units (read_model.lua take_cursor)

-- Records a raise of `slot` (its place already written): its snapshot, then itself in the log.
local function noise_raise(slot)
  local class, level, raise = place_of(slot)
  if not class then return end
  local log = redis.call('HGET', KEYS[K.classes], 'q') or ''
  local kept, per_class, counts = {}, {}, {}
  local entries = words(log)
  -- Newest first, so that the per-class cap keeps each class's newest.
  for i = #entries, 1, -1 do
    local at, of = string.match(entries[i], '^(%d+):(.+)$')
    at = tonumber(at)
    if at and raise - at < NOISE_WINDOW and (per_class[of] or 0) < NOISE_KEEP then
      per_class[of] = (per_class[of] or 0) + 1
      if at < raise then counts[of] = (counts[of] or 0) + 1 end
      table.insert(kept, 1, entries[i])
    end
  end
  kept[#kept + 1] = text(raise) .. ':' .. class
  redis.call('HSET', KEYS[K.classes], 'q', ' ' .. table.concat(kept, ' '))
  local snapshot = {}
  for of, n in pairs(counts) do snapshot[#snapshot + 1] = of .. '=' .. n end
  table.sort(snapshot)
  if #snapshot > 0 and level < LEVEL.critical then
    redis.call('HSET', KEYS[K.places], 'q:' .. slot, ' ' .. table.concat(snapshot, ' '))
  else
    redis.call('HDEL', KEYS[K.places], 'q:' .. slot)
  end
end

-- Quiet for a user seeing the classes `seen` (a set): a slot whose snapshot is `snapshot`
-- (places field "q:<slot>", or nil), under `budget` (0: off).
local function quiet_for(seen, snapshot, budget)
  if budget <= 0 or not snapshot then return false end
  local total = 0
  for of, n in string.gmatch(snapshot, '(%S+)=(%d+)') do
    if seen[of] then
      total = total + tonumber(n)
      if total >= budget then return true end
    end
  end
  return false
end

-- The snapshots of `slots` (one read): {slot = snapshot or nil}.
local function noise_snapshots(slots)
  local found = {}
  if #slots == 0 then return found end
  local fields = {}
  for i, slot in ipairs(slots) do fields[i] = 'q:' .. slot end
  for i, raw in ipairs(redis.call('HMGET', KEYS[K.places], unpack(fields))) do
    if raw then found[slots[i]] = raw end
  end
  return found
end

-- A slot's snapshot goes with it (the sweep). When the warehouse's last class went, the log
-- keeps only the raises of the past hour (a raise within the hour still counts them).
local function noise_forget(slot)
  redis.call('HDEL', KEYS[K.places], 'q:' .. slot)
  if redis.call('HLEN', KEYS[K.classes]) ~= 1 then return end
  local kept = {}
  for _, entry in ipairs(words(redis.call('HGET', KEYS[K.classes], 'q'))) do
    local at = tonumber(string.match(entry, '^(%d+):'))
    if at and NOW * 1024 - at < NOISE_WINDOW then kept[#kept + 1] = entry end
  end
  if #kept == 0 then redis.call('HDEL', KEYS[K.classes], 'q')
  else redis.call('HSET', KEYS[K.classes], 'q', ' ' .. table.concat(kept, ' ')) end
end

-- Of `users` (`inboxes[i]` the inboxes users[i] sees, space-separated: "u:7 r:2"), those
-- `slot` came quietly to under `budget` (0: off): {user = true}. Every inbox's classes in one
-- read, the snapshot in another; nothing when it has no snapshot.
local function quiet_users(users, slot, inboxes, budget)
  local quiet = {}
  if budget <= 0 or #users == 0 then return quiet end
  local snapshot = redis.call('HGET', KEYS[K.places], 'q:' .. slot)
  if not snapshot then return quiet end
  local wanted, index, classes = {}, {}, {}
  for i = 1, #users do
    for inbox in string.gmatch(inboxes[i] or '', '%S+') do
      if not index[inbox] then
        wanted[#wanted + 1] = 'i:' .. inbox
        index[inbox] = #wanted
      end
    end
  end
  if #wanted > 0 then
    local found = redis.call('HMGET', KEYS[K.classes], unpack(wanted))
    for inbox, at in pairs(index) do classes[inbox] = found[at] or '' end
  end
  for i, user in ipairs(users) do
    local seen = {}
    for inbox in string.gmatch(inboxes[i] or '', '%S+') do
      for seen_class in string.gmatch(classes[inbox] or '', '%S+') do seen[seen_class] = true end
    end
    if quiet_for(seen, snapshot, budget) then quiet[user] = true end
  end
  return quiet
end

-- --- Told loudly ---------------------------------------------------------------------------------

-- "Told loudly" (pushed, reminded, a sound): of `users`, those who should be told of `slot`
-- now: it is open and not silenced (is_open), live, unread for them (read_by: not read, not
-- snoozed), not under their mute floor, and it did not come quietly to them (quiet_for, with
-- `inboxes[i]` the inboxes users[i] sees, space-separated, and `budget` the noise budget per
-- hour; without them, as the stream's reminders ask, no noise budget applies). Add a condition
-- here, nowhere else.
local function to_tell(users, slot, inboxes, budget)
  inboxes, budget = inboxes or {}, budget or 0
  local told = {}
  if #users == 0 or not live(slot) or not is_open(slot) then return told end
  local class, level, raise = place_of(slot)
  local read = read_by_users(users, slot, class, raise)
  local fields = {}
  for i, user in ipairs(users) do fields[i] = 'q:' .. user end
  local mutes = redis.call('HMGET', KEYS[K.users], unpack(fields))
  local quiet = quiet_users(users, slot, inboxes, budget)
  for i, user in ipairs(users) do
    if not read[user] and level >= mute_floor(mutes[i] or nil) and not quiet[user] then
      told[#told + 1] = user
    end
  end
  return told
end

-- --- Flapping ------------------------------------------------------------------------------------
-- SPEC 17: a key (of one message type, in the warehouse) that made more than `most` new alerts
-- within `window` ms flaps: its next raise makes no new alert; the latest one is raised again
-- quietly instead (flap_fold). It stops once the key raised nothing for a whole window.
-- A key's record (notifications/keys.py flaps, field "<type code>|<alert key>"):
--   "<latest id> <last raise ms> <flapping 0/1> <ms> ...": the latest alert it made, when it last
--   raised (a folded raise too), whether it flaps, and when it made each new alert in the window.

-- The record of `field` as it stands at NOW: a key quiet for a window starts afresh.
local function flap_record(flaps_key, field, window)
  local parts = words(redis.call('HGET', flaps_key, field) or nil)
  local record = {latest = parts[1], flapping = parts[3] == '1', made = {}}
  if not parts[2] or NOW - tonumber(parts[2]) >= window then
    record.flapping = false
    return record
  end
  for i = 4, #parts do
    if NOW - tonumber(parts[i]) < window then record.made[#record.made + 1] = tonumber(parts[i]) end
  end
  return record
end

local function flap_save(flaps_key, field, record, window)
  local parts = {record.latest, text(NOW), record.flapping and '1' or '0'}
  for _, at in ipairs(record.made) do parts[#parts + 1] = text(at) end
  redis.call('HSET', flaps_key, field, table.concat(parts, ' '))
  redis.call('PEXPIRE', flaps_key, window)
end

-- Whether this raise of `field` folds: the latest alert's slot when it does (the record is
-- saved: still flapping, raised now); else nil and the record, for flap_made once the new
-- alert is stored. A latest alert already swept or expired cannot be raised again: the raise
-- makes a new one (which becomes the latest). `most` 0: nothing ever flaps.
local function flapping_into(flaps_key, field, most, window)
  local record = flap_record(flaps_key, field, window)
  if most > 0 and record.latest and (record.flapping or #record.made >= most) then
    local slot = redis.call('HGET', KEYS[K.ids], record.latest)
    if slot and live(slot) then
      record.flapping = true
      flap_save(flaps_key, field, record, window)
      return slot, record
    end
  end
  return nil, record
end

-- A new alert `id` made by the key (flapping_into said it does not fold).
local function flap_made(flaps_key, field, record, id, window)
  record.latest = id
  record.made[#record.made + 1] = NOW
  flap_save(flaps_key, field, record, window)
end

-- The latest alert raised again by a flapping key: occurrences + 1, "flapping": true, history
-- `flapping` (by null), counted in the day's report, and a new cursor (clients replace their
-- copy), but NOT a raise: every read and snooze of it stands, so it is unread again for nobody,
-- and nothing is pushed, reminded or e-mailed (the caller announces nothing). One claimed stays
-- claimed; one resolved is open again (the condition is back), at its old raise cursor: whoever
-- had read it still has it read. Returns the new cursor.
local function flap_fold(slot, type_code, retention)
  local state = state_of(slot)
  state.occurrences = (state.occurrences or 1) + 1
  state.flapping = true
  if state.status == 'resolved' then
    state.status = 'open'
    state.resolved_by = cjson.null
    state.resolved_at = cjson.null
  end
  count(type_code, 'flapping', retention)
  return change(slot, state, 'flapping', cjson.null)
end

-- --- Claims that expire --------------------------------------------------------------------------
-- SPEC 17: a claim held a type's claim timeout with no progress is let go by the system
-- (lua/expire_claims.lua). Progress is an action run on the alert after the claim (history
-- `action`, `action_succeeded`, `action_failed`, SPEC 14): it restarts the clock; a resolve
-- ends the claim anyway.
local PROGRESS = {action = true, action_succeeded = true, action_failed = true}

-- When the clock of a claimed alert's claim started: its claim, or its latest progress since.
local function claim_clock(slot, state)
  local started = tonumber(state.claimed_at) or 0
  local raw = redis.call('HGET', KEYS[K.history], slot)
  if raw then
    for _, entry in ipairs(cjson.decode('[' .. raw .. ']')) do
      if PROGRESS[entry.event] and tonumber(entry.at) > started then started = tonumber(entry.at) end
    end
  end
  return started
end

-- Lets the claim of `slot` go, by the system: open again as after a release (every snooze
-- wakes; unread again for whoever has not read it), history `claim_expired` (by null), and
-- the holder's streams are told: "claim_expired <cursor> <id> u:<holder>" on the events
-- channel. Returns the new cursor.
local function expire_claim(slot, state, id)
  local holder = state.claimed_by.id
  local cursor = reopen(slot, state, cjson.null, '', 'claim_expired')[2]
  tell_streams('claim_expired ' .. cursor .. ' ' .. id .. ' u:' .. text(holder))
  return cursor
end

-- --- Noise report ---
-- SPEC 17's noise report (notifications/noise_report.py), counted at write time per UTC day,
-- kept as long as the alert report's counts (`retention` ms), so that the report reads a few
-- keys per day whatever the history:
--   noise_hours "<hour>|<class>": raises (publish, re-raise, escalation; not one held back
--     by a silence) of alerts of that class in that UTC hour (0-23), and "c|<class>": the
--     class's inboxes ("u:1 r:2"), so the report knows who saw them after the class is gone;
--   raised_keys "<type code>|<alert key>" scored by how often an alert with that key was
--     published or raised again that day (held back or not), at most RAISED_KEYS_KEPT of the
--     most raised.
-- The per-day report hash also counts `resolved_unclaimed_by_system` (resolve.lua).

local RAISED_KEYS_KEPT = 1000

-- A raise that reached its inboxes (`slot`'s place already written).
local function report_reached(slot, retention)
  local class = place_of(slot)
  if not class then return end
  local hour = math.floor(NOW / 3600000) % 24
  redis.call('HINCRBY', KEYS[K.noise_hours], hour .. '|' .. class, 1)
  if redis.call('HEXISTS', KEYS[K.noise_hours], 'c|' .. class) == 0 then
    redis.call('HSET', KEYS[K.noise_hours], 'c|' .. class, redis.call('HGET', KEYS[K.classes], class) or '')
  end
  redis.call('PEXPIRE', KEYS[K.noise_hours], retention)
end

-- An alert of `type_code` with alert key `key` ("" or nil: none) was published or raised again.
local function report_key(type_code, key, retention)
  if not key or key == '' or key == cjson.null then return end
  redis.call('ZINCRBY', KEYS[K.raised_keys], 1, type_code .. '|' .. key)
  redis.call('ZREMRANGEBYRANK', KEYS[K.raised_keys], 0, -(RAISED_KEYS_KEPT + 1))
  redis.call('PEXPIRE', KEYS[K.raised_keys], retention)
end

-- Whether anyone ever claimed the alert in `state` (first_claimed_at since claims set it; a
-- claim still held before that).
local function ever_claimed(state)
  return state.first_claimed_at ~= nil
    or (state.claimed_at ~= nil and state.claimed_at ~= cjson.null)
end
