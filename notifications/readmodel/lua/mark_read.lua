-- Mark notifications read for a user, one by one (POST .../read/ with ids): idempotent; ids
-- that are not the user's, unknown or expired are ignored.
-- Preludes: read_model
-- KEYS[1..23] the warehouse (read_model/01_layout.lua)   KEYS[24..] the inboxes the user sees
-- ARGV[1] now   ARGV[2] user id
-- ARGV[3] most expired but not yet swept notifications looked at to leave them out of counts
-- ARGV[4..] notification ids (UUIDs)
-- Returns the view head (read_model/ view_head) with how many were marked after it.

local user = ARGV[2]
local marked = 0
if #ARGV >= 4 then
  local ids = {}
  for i = 4, #ARGV do ids[#ids + 1] = ARGV[i] end
  local marks = marks_of(user)
  for _, slot in ipairs(redis.call('HMGET', KEYS[K.ids], unpack(ids))) do
    if slot and visible(slot, FIRST_OWN) and live(slot) then
      local class, _, raise = place_of(slot)
      if not is_read(user, slot, marks, class, raise) then
        mark(user, slot)
        marked = marked + 1
      end
    end
  end
end
local view = user_view(user)
local seen, class_list = classes_seen(FIRST_OWN)
local counts = unread_counts(user, view, seen, class_list, open_states(class_list), tonumber(ARGV[3]))
local reply = view_head('marked', counts, view.version)
reply[#reply + 1] = marked
return reply
