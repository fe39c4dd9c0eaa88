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
