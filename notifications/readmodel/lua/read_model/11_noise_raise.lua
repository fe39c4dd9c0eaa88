-- --- Noise budget: one raise, from the counts kept beside the log ---
-- The common raise (a publish, a re-raise, an escalation) of 11_noise_log: when the counts
-- kept beside the log (classes field "qn", noise_save) are the log's, only the words leaving
-- the hour are read; otherwise the log is counted word by word (noise_raise_all).

-- The tally kept beside the log `raw` (its counts `kept`); nil when it is not the log's
-- (missing, or another length or last word: the log was written otherwise, and is counted
-- word by word again). An empty log needs none.
local function noise_kept_tally(raw, kept)
  if raw == '' then return '' end
  if not kept then return nil end
  local size, last, tally = string.match(kept, '^(%d+) (%S+)(.*)$')
  if not size or tonumber(size) ~= #raw then return nil end
  if string.sub(raw, -#last - 1) ~= ' ' .. last then return nil end
  return tally
end

-- `tally` with one raise of `class` (hex digits) fewer: nil when it has none of `class`.
-- A count's digits change in place, so the order stays (a class is followed by '=', which no
-- hex digit is: two entries differ before their counts).
local function noise_tally_drop(tally, class)
  local at = string.find(tally, ' ' .. class .. '=', 1, true)
  if not at then return nil end
  local from = at + #class + 2
  local to = string.find(tally, ' ', from, true)
  local n = tonumber(string.sub(tally, from, (to or 0) - 1)) - 1
  local after = to and string.sub(tally, to) or ''
  if n == 0 then return string.sub(tally, 1, at - 1) .. after end
  return string.sub(tally, 1, from - 1) .. n .. after
end

-- `tally` with a first raise of `class`, in its place.
local function noise_tally_new(tally, class)
  local entry = class .. '=1'
  for at, other in string.gmatch(tally, '() (%S+)') do
    if other > entry then
      return string.sub(tally, 1, at - 1) .. ' ' .. entry .. string.sub(tally, at)
    end
  end
  return tally .. ' ' .. entry
end

-- One raise (of `slot`, its class hex digits) with the log `raw` and the tally kept beside it:
-- only the words leaving the window (at its front) are read, the snapshot is the tally, and a
-- class over NOISE_KEEP loses its oldest, found by a plain find (raises are digits and classes
-- hex, so ":<class> " is only ever that class's word, and the first is the oldest; NOISE_KEEP
-- > 1, so it is not the last word). The same log and snapshot as the word-by-word way (one
-- raise: what that drops at the end, this drops at once); false (nothing written) when the
-- log does not hold what the tally says, and the caller takes that way.
local function noise_raise_counted(slot, class, level, raise, raw, tally)
  local size, at, first = #raw, 2, nil -- the first word left starts at `at`, its colon `first`
  while at <= size do
    first = string.find(raw, ':', at, true)
    local raised = first and tonumber(string.sub(raw, at, first - 1))
    if not raised then return false end
    if raise - raised < NOISE_WINDOW then break end
    local space = string.find(raw, ' ', first, true) or size + 1
    tally = noise_tally_drop(tally, string.sub(raw, first + 1, space - 1))
    if not tally then return false end
    at = space + 1
  end
  local word, entry = text(raise) .. ':' .. class, ' ' .. class .. '='
  local had = string.find(tally, entry, 1, true)
  local digits = had and string.match(tally, '^%d+', had + #entry)
  local n, log = digits and tonumber(digits) or 0, nil
  if n >= NOISE_KEEP then
    local colon = string.find(raw, ':' .. class .. ' ', at, true)
    if not colon then return false end
    if colon == first then -- the first word left (one class raising steadily)
      log = string.sub(raw, colon + #class + 1) .. ' ' .. word
    else
      local start = colon -- its raise's first digit
      while string.byte(raw, start - 1) ~= 32 do start = start - 1 end
      log = string.sub(raw, at - 1, start - 2) .. string.sub(raw, colon + #class + 1)
        .. ' ' .. word
    end
  else
    log = string.sub(raw, at - 1) .. ' ' .. word
  end
  noise_snapshot(slot, level, tally)
  if not had then tally = noise_tally_new(tally, class)
  elseif n < NOISE_KEEP then
    local from = had + #entry
    tally = string.sub(tally, 1, from - 1) .. (n + 1) .. string.sub(tally, from + #digits)
  end
  noise_save(log, word, tally)
  return true
end

-- Records a raise of `slot` (its place already written; `place`: that place, where the caller
-- has it): its snapshot, then itself in the log. From the tally kept beside the log where it
-- is the log's (noise_raise_counted); otherwise word by word.
local function noise_raise(slot, place)
  local class, level, raise
  if place then class, level, raise = place_parts(place)
  else class, level, raise = place_of(slot) end
  if not class then return end
  if string.find(class, '^%x+$') then
    local got = redis.call('HMGET', KEYS[K.classes], 'q', 'qn')
    local raw = got[1] or ''
    local tally = noise_kept_tally(raw, got[2] or nil)
    if tally and noise_raise_counted(slot, class, level, raise, raw, tally) then return end
  end
  noise_raise_all({slot}, {place})
end
