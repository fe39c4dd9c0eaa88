-- The directory's version, confirmed by a script that writes from what the caller's directory
-- said (directory/confirmed_writes.py), put before that script.
--
-- Takes: KEYS[last], ARGV[last] (config/lua_compose.py appends them, before an
-- Idempotency-Key's when the script has one)
-- KEYS[last] the directory's version key (directory.keys.version_key), or any key of the
--            script's slot when there is nothing to confirm
-- ARGV[last] the version the caller's directory holds, not yet confirmed ("" when there is
--            nothing to confirm: the caller read the version itself)
-- Both are taken off KEYS and ARGV here, so the script below sees only its own.
-- Returns nothing itself: the script returns {-2} before its first write when
-- directory_moved() is true (the version is no longer the caller's: a user, role, token,
-- warehouse or message type changed since), and the caller runs again from a fresh directory.
local DIRECTORY_VERSION_KEY = table.remove(KEYS)
local DIRECTORY_HELD = table.remove(ARGV)

local function directory_version(version_key)
  return redis.call('GET', version_key)
end

local function directory_moved()
  if DIRECTORY_HELD == '' then return false end
  return directory_version(DIRECTORY_VERSION_KEY) ~= DIRECTORY_HELD
end
