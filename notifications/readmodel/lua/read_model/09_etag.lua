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
