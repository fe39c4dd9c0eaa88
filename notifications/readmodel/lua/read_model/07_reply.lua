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
