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
