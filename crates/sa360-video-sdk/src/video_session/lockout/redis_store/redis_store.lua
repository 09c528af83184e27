-- The lockout store's steps on one account, run atomically by Redis (one
-- script call per step). Mirrors crates/sa360-video-sdk/src/video_session/lockout/state.rs.
--
-- KEYS[1]  the bucket: one hash, without a TTL, holding the bucket's record
--          (the fields below) and one field per account of the bucket (its
--          64 hex digits). Because the record and the counts are one key they
--          live and die together: an eviction, a flush or a lost shard takes
--          both, and the missing record is noticed (VS-18). A key without a
--          TTL is never evicted under the volatile-* policies.
--   since  the time from which the bucket's memory is complete (µs on this
--          server's clock, TIME); 0 once declared new (`initialize`).
--   why    what made `since` later than 0: none (no record and no sign of a
--          loss: probably never declared new), restart, flush, evict, start
--          (the server started within a lockout window, without the record),
--          format (a key of another version or kind).
--   life   the server life (INFO server run_id) that last wrote the record,
--   repl   its replication id (master_replid), and
--   dur    1 when that life kept every acknowledged write (appendonly yes and
--          appendfsync always, as the client read them; aof_enabled checked
--          here). A record of another life is a restart: a loss of the last
--          writes, unless this server is a replica promoted from that life
--          (its master_replid2) or that life was durable.
--   gc     the HSCAN cursor that sweeps accounts whose entries all ended.
-- An account's field: "last;block;pause;id,started,failed,until;…" (µs,
-- "-" for no block or pause, failed -1 while unknown, last the latest end).
-- STEP     set by the line the Rust side puts before this text: each step
--          ("reserve", "resolve", "hold", "view", "init", "force") is its own
--          script.
-- ARGV     account, attempt id, max_failures, unknown_for, failure_for,
--          block_beyond_window, margin, longest_block (durations in µs),
--          durable (1 or 0), then the step's own arguments (resolution; or
--          hold kind and wait).
-- Returns  {counted, refusal (0 none, 1 budget, 2 known block, 3 presumed
--          block, 4 rate limited, 5 history unknown), wait µs, blocked_for µs
--          (-1 none), reserved, replicas connected to this server (reserve only,
--          else -1), why (the loss's cause, "" when complete)}. init returns
--          {0 declared, 1 already, 2 refused for a loss, 3 refused for counts,
--          wait µs, why}.

local bucket = KEYS[1]
local step, account, id = STEP, ARGV[1], ARGV[2]
local max_failures = tonumber(ARGV[3])
local unknown_for = tonumber(ARGV[4])
local failure_for = tonumber(ARGV[5])
local beyond = tonumber(ARGV[6])
local margin = tonumber(ARGV[7])
local longest = tonumber(ARGV[8])
local durable = ARGV[9]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])

-- The value of `name` in an INFO text (a plain search: cheaper than a pattern).
local function field(text, name)
  local i = string.find(text, '\n' .. name .. ':', 1, true)
  if not i then return nil end
  local from = i + #name + 2
  return string.sub(text, from, string.find(text, '\r', from, true) - 1)
end
local function info(section, name)
  return field(redis.call('INFO', section), name)
end

-- The bucket's record, checked against this server's life.
local server = redis.call('INFO', 'server')
local run_id = field(server, 'run_id')
local replication = redis.call('INFO', 'replication')
local replid = field(replication, 'master_replid')
local record = redis.pcall('HMGET', bucket, 'since', 'why', 'life', 'repl', 'dur', 'gc')
local since, why, gc
local found = type(record) == 'table' and not record.err and record[1]
if type(record) == 'table' and record.err then
  -- Not a hash: a key of another version or kind holds the name.
  redis.call('DEL', bucket)
  since, why = now, 'format'
elseif not record[1] then
  if redis.call('EXISTS', bucket) == 1 then
    redis.call('DEL', bucket)
    since, why = now, 'format'
  else
    local stats = redis.call('INFO', 'commandstats')
    if string.match(stats, 'cmdstat_flushall:') or string.match(stats, 'cmdstat_flushdb:') then
      since, why = now, 'flush'
    elseif tonumber(info('stats', 'evicted_keys') or '0') > 0
        and string.sub(info('memory', 'maxmemory_policy') or '', 1, 7) == 'allkeys' then
      since, why = now, 'evict'
    elseif tonumber(field(server, 'uptime_in_seconds')) * 1000000 < unknown_for then
      since, why = now, 'start'
    else
      since, why = now, 'none'
    end
  end
else
  if not string.match(record[1], '^%d+$') then
    return redis.error_reply('lockout record ' .. bucket .. ' is corrupt')
  end
  since, why, gc = tonumber(record[1]), record[2] or '', record[6]
  if record[3] ~= run_id then
    local continued = record[4] == field(replication, 'master_replid2')
    local kept = record[5] == '1' and info('persistence', 'aof_enabled') == '1'
    if not continued and not kept then
      -- Writes after the last save (RDB) or fsync (AOF everysec) are lost,
      -- or this is another server whose history is not that life's: what it
      -- lacks may have been written until now.
      since, why = now, 'restart'
    end
  end
end
local dur = '0'
if durable == '1' and info('persistence', 'aof_enabled') == '1' then dur = '1' end
-- The record is written when a field of it changes (or it is new).
local dirty = not found or record[3] ~= run_id or record[4] ~= replid or record[5] ~= dur
-- Attempts the store may have forgotten started at or before `since`; the
-- service forgets them by since + unknown_for.
local history_until = 0
if since > 0 then
  history_until = since + unknown_for
  if history_until > now + unknown_for then history_until = now + unknown_for end
end
if history_until <= now and why ~= '' then why, dirty = '', true end
if found and tonumber(record[1]) ~= since then dirty = true end

local function save_record()
  if dirty then
    redis.call('HSET', bucket, 'since', string.format('%.0f', since), 'why', why,
      'life', run_id, 'repl', replid or '', 'dur', dur)
  end
end

if step == 'init' or step == 'force' then
  local accounts = redis.call('HLEN', bucket)
  if found then
    for i = 1, 6 do
      if record[i] then accounts = accounts - 1 end
    end
  end
  -- Counts, or a sign of a loss (not only a missing record, or a server
  -- that just started: both may be a new deployment), are not declared new.
  local lost = history_until > now and why ~= 'none' and why ~= 'start'
  if step == 'init' and (accounts > 0 or lost) then
    save_record()
    if accounts > 0 then return { 3, 0, why } end
    return { 2, history_until - now, why }
  end
  if since == 0 and why == '' then
    save_record()
    return { 1, 0, '' }
  end
  since, why, dirty = 0, '', true
  save_record()
  return { 0, 0, '' }
end

local function parse(value)
  local parts = {}
  for p in string.gmatch(value, '[^;]+') do table.insert(parts, p) end
  return parts
end

local attempts, blocked, paused = {}, nil, nil
local stored = redis.call('HGET', bucket, account)
if stored then
  local parts = parse(stored)
  if parts[2] ~= '-' then blocked = tonumber(parts[2]) end
  if parts[3] ~= '-' then paused = tonumber(parts[3]) end
  for i = 4, #parts do
    local a, s, f, u = string.match(parts[i], '^(%x+),(%d+),(%-?%d+),(%d+)$')
    if not a then
      return redis.error_reply('lockout entry of ' .. account .. ' is corrupt')
    end
    f = tonumber(f)
    if f < 0 then f = nil end
    table.insert(attempts, { id = a, s = tonumber(s), f = f, u = tonumber(u) })
  end
end

-- settle: clamp what is dated in the future, drop what ended
local kept = {}
for _, a in ipairs(attempts) do
  if a.s > now then a.s = now end
  if a.f and a.f > now then a.f = now end
  if a.u > now + unknown_for then a.u = now + unknown_for end
  if a.u > now then table.insert(kept, a) end
end
attempts = kept
if blocked then
  if blocked > now + longest then blocked = now + longest end
  if blocked <= now then blocked = nil end
end
if paused then
  if paused > now + longest then paused = now + longest end
  if paused <= now then paused = nil end
end

local function find(aid)
  for i, a in ipairs(attempts) do
    if a.id == aid then return i end
  end
  return nil
end

local function view(reserved)
  local counted = #attempts
  local refusal, wait, blocked_for = 0, 0, -1
  if blocked then
    blocked_for = blocked - now
  end
  if history_until > now and not (blocked and blocked >= history_until) then
    refusal, wait = 5, history_until - now
  elseif blocked then
    refusal, wait = 2, blocked - now
  elseif paused then
    refusal, wait = 4, paused - now
  elseif counted > max_failures then
    local last = now
    for _, a in ipairs(attempts) do
      if a.u > last then last = a.u end
    end
    refusal, wait = 3, last + beyond - now
  elseif counted >= max_failures then
    local first = nil
    for _, a in ipairs(attempts) do
      if not first or a.u < first then first = a.u end
    end
    if not first then first = now + failure_for end
    refusal, wait = 1, first - now
  end
  if wait < 0 then wait = 0 end
  return { counted, refusal, wait, blocked_for, reserved, -1, why }
end

local function mark_failed(i)
  if i then
    attempts[i].f = now
    attempts[i].u = now + failure_for
  else
    table.insert(attempts, { id = id, s = now, f = now, u = now + failure_for })
  end
end

local function save()
  save_record()
  local fields, last = {}, 0
  for _, a in ipairs(attempts) do
    table.insert(fields, string.format('%s,%.0f,%.0f,%.0f', a.id, a.s, a.f or -1, a.u))
    if a.u > last then last = a.u end
  end
  if blocked and blocked > last then last = blocked end
  if paused and paused > last then last = paused end
  if last == 0 then
    redis.call('HDEL', bucket, account)
  else
    local b, p = '-', '-'
    if blocked then b = string.format('%.0f', blocked) end
    if paused then p = string.format('%.0f', paused) end
    table.insert(fields, 1, p)
    table.insert(fields, 1, b)
    table.insert(fields, 1, string.format('%.0f', last))
    redis.call('HSET', bucket, account, table.concat(fields, ';'))
  end
  -- Each reservation sweeps a few accounts whose entries all ended (nothing
  -- else removes them: the bucket has no TTL).
  if step ~= 'reserve' then return end
  local scan = redis.call('HSCAN', bucket, gc or '0', 'COUNT', 8)
  local items = scan[2]
  for i = 1, #items, 2 do
    local name, value = items[i], items[i + 1]
    if #name == 64 then
      local ends = tonumber(string.match(value, '^(%d+);'))
      if ends and ends <= now then redis.call('HDEL', bucket, name) end
    end
  end
  redis.call('HSET', bucket, 'gc', scan[1])
end

local result
if step == 'reserve' then
  local i = find(id)
  if i and not attempts[i].f then
    -- Already reserved (the client ran the step again to wait for more
    -- replicas): the same reservation, counted once.
    result = view(1)
  else
    local before = view(0)
    if before[2] ~= 0 then
      result = before
    else
      if i then table.remove(attempts, i) end
      table.insert(attempts, { id = id, s = now, f = nil, u = now + unknown_for })
      result = view(1)
    end
  end
  result[6] = tonumber(field(replication, 'connected_slaves')) or 0
elseif step == 'resolve' then
  local resolution = ARGV[10]
  local i = find(id)
  if resolution == 'succeeded' then
    if i then
      local begun = attempts[i].s
      table.remove(attempts, i)
      local left = {}
      for _, a in ipairs(attempts) do
        if not (a.f and a.f < begun) then table.insert(left, a) end
      end
      attempts = left
    end
  elseif resolution == 'failed' then
    mark_failed(i)
  elseif resolution == 'unknown' then
    if not i then
      table.insert(attempts, { id = id, s = now, f = nil, u = now + unknown_for })
    end
  elseif resolution == 'not_counted' then
    if i then table.remove(attempts, i) end
  else
    return redis.error_reply('unknown resolution ' .. tostring(resolution))
  end
  result = view(0)
elseif step == 'hold' then
  local kind, wait = ARGV[10], tonumber(ARGV[11])
  if wait > longest - margin then wait = longest - margin end
  local ends = now + wait + margin
  local i = find(id)
  if kind == 'blocked' then
    mark_failed(i)
    if not blocked or ends > blocked then blocked = ends end
  elseif kind == 'rate_limited' then
    if i then table.remove(attempts, i) end
    if not paused or ends > paused then paused = ends end
  else
    return redis.error_reply('unknown hold ' .. tostring(kind))
  end
  result = view(0)
elseif step == 'view' then
  result = view(0)
else
  return redis.error_reply('unknown step ' .. tostring(step))
end
save()
return result
