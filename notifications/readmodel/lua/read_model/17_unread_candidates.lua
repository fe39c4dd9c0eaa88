-- --- The newest unread's candidates (unread.lua) -----------------------------------------------
-- Candidates of a user's newest unread, newest raised first: each class's newest open ones
-- raised above the user's watermark of it (then its open index below the last of them, when the
-- class has more), and the ones the user woke at or below the watermark of their class (SPEC 13).
-- Entries are "<raise, 16 digits>:<level>:<slot>" of the list's class, or with ":<class>" after
-- them in the list of woken ones (it has no class). A list gives its entries one at a time
-- (`next()`, nil at its end); `head` is the one it gave that the merge has not taken yet, `raise`
-- its raise (nil: ask `next()` when needed, unless the list `ended`).
-- unread_candidates gives the merge: `merge.next()` the next candidate (raise, level, slot,
-- class; nil when none is left). `merge.allow_go_on`: whether a class whose listed ones are
-- used up may go on into its open index; where one would have to and may not, the candidates
-- end and `merge.stopped` is set (the caller may then allow it and go on).
local function unread_candidates(view, seen, class_list, states, chunk, allow_go_on)
  local marks = view.marks
  local merge = {allow_go_on = allow_go_on, stopped = false}
  local lists = {}
  for _, class in ipairs(class_list) do
    local state, watermark = states[class], watermark_in(marks, class)
    -- An entry is raised above the watermark when it sorts after "<watermark, 16 digits>;".
    local above, rest, at = pad(watermark) .. ';', state.rest, 1
    local list, taken, last = {class = class, watermark = watermark}, 0, nil
    -- The listed ones above the watermark (split only as far as the merge takes them, at their
    -- spaces); when every listed one was above it and the class holds more, it goes on below the
    -- last.
    list.next = function()
      local entry
      while not entry and at <= #rest do
        local space = string.find(rest, ' ', at, true) or #rest + 1
        if space > at then entry = string.sub(rest, at, space - 1) end
        at = space + 1
      end
      if not entry then
        if last and taken == state.listed and taken < open_total(state) then
          list.below = string.sub(last, 1, 16)
        end
        return nil
      end
      if entry < above then return nil end
      taken, last = taken + 1, entry
      return entry
    end
    lists[#lists + 1] = list
  end
  -- Woken ones under the watermark of their class, open: one more list, by raise.
  if #view.woken > 0 then
    local woken, at = {}, 0
    local places = redis.call('HMGET', KEYS[K.places], unpack(view.woken))
    local flags = redis.call('HMGET', KEYS[K.flags], unpack(view.woken))
    for i, slot in ipairs(view.woken) do
      if places[i] and is_open_flag(flags[i]) then
        local class, level, raise = place_parts(places[i])
        if seen[class] and raise <= watermark_in(marks, class) then
          woken[#woken + 1] = newest_entry(raise, level, slot) .. ':' .. class
        end
      end
    end
    table.sort(woken, function(x, y) return x > y end)
    lists[#lists + 1] = {next = function()
      at = at + 1
      return woken[at]
    end}
  end

  -- A class whose listed ones are used up goes on in its open index, severity by severity.
  local function go_on(list)
    local class, below, watermark = list.class, list.below, list.watermark
    list.below = nil
    -- Below the user's mute floor nothing is unread for them: those ranges are not read at all.
    for level = view.floor, 2 do
      local head = class .. ':' .. level
      local top, bottom = '(' .. head .. ':' .. below, '[' .. head .. ':' .. pad(watermark + 1)
      local range = pager(function()
        local found = redis.call('ZREVRANGEBYLEX', KEYS[K.open], top, bottom, 'LIMIT', 0, chunk)
        if #found > 0 then top = '(' .. found[#found] end
        for i, member in ipairs(found) do
          local raise, slot = string.match(member, ':(%d+):(%d+)$')
          found[i] = raise .. ':' .. level .. ':' .. slot
        end
        return found
      end, nil, chunk)
      lists[#lists + 1] = {class = class, next = function()
        local entry = head_of(range)
        if entry then range.pos = range.pos + 1 end
        return entry
      end}
    end
  end

  -- The next candidate of all lists: raise, level, slot, class; nil when none is left.
  -- (A class that goes on adds its lists to `lists`: this same loop reaches them.)
  -- Counting the quiet ones past the newest `want` does not go on into the open index: where a
  -- class would have to (`stopped`), the candidates end; they go on only to find the `want`.
  function merge.next()
    local best, best_list
    local i, list = 1, lists[1]
    while list do
      local raise = list.raise
      if raise == nil and not list.ended then
        local entry = list.next()
        if entry == nil then
          list.ended = true
        else
          raise = tonumber(string.sub(entry, 1, 16))
          list.head, list.raise = entry, raise
        end
      end
      if not raise and list.below then
        if not merge.allow_go_on then
          merge.stopped = true
          return nil
        end
        go_on(list)
      end
      if raise and (not best or raise > best) then best, best_list = raise, list end
      i = i + 1
      list = lists[i]
    end
    if not best then return nil end
    local entry, class = best_list.head, best_list.class
    best_list.head, best_list.raise = nil, nil
    if not class then
      local level, slot, of = string.match(entry, '^%d+:(%d):(%d+):(.*)$')
      return best, tonumber(level), slot, of
    end
    return best, string.byte(entry, 18) - 48, string.sub(entry, 20), class
  end

  return merge
end
