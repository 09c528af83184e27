-- The lockout store's steps on one account, run atomically by Redis (one
-- script call per step). Mirrors crates/sa360-video-sdk/src/video_session/lockout/state.rs.
--
-- KEYS[1]  the account's hash: field "b" (block end), "p" (pause end) and one
--          field "a:<attempt id>" per counted attempt: "started,failed,until"
--          (failed -1 while unknown). Times are microseconds on this server's
--          clock (TIME), so every replica shares one clock.
-- KEYS[2]  the marker of the account's bucket (same hash slot as KEYS[1]): the
--          time from which the store's memory of the bucket is complete (VS-18).
--          "0" once the store was declared new (`RedisStore::initialize`). A
--          missing marker means the server lost its data (or was never
--          declared new): it is written with now, and every account of the
--          bucket is refused until now + unknown_for.
-- STEP     set by the line the Rust side puts before this text: each step
--          ("reserve", "resolve", "hold", "view") is its own script.
-- ARGV     attempt id, max_failures, unknown_for, failure_for,
--          block_beyond_window, margin, longest_block (durations in µs),
--          then the step's own arguments (resolution; or hold kind and wait).
-- Returns  {counted, refusal (0 none, 1 budget, 2 known block, 3 presumed
--          block, 4 rate limited, 5 history unknown), wait µs, blocked_for µs
--          (-1 none), reserved, replicas connected to this server (reserve only,
--          else -1)}.

local key = KEYS[1]
local step, id = STEP, ARGV[1]
local max_failures = tonumber(ARGV[2])
local unknown_for = tonumber(ARGV[3])
local failure_for = tonumber(ARGV[4])
local beyond = tonumber(ARGV[5])
local margin = tonumber(ARGV[6])
local longest = tonumber(ARGV[7])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])

-- The bucket's marker: since when the store remembers every attempt.
local since = redis.call('GET', KEYS[2])
if since then
  if not string.match(since, '^%d+$') then
    return redis.error_reply('lockout marker ' .. KEYS[2] .. ' is corrupt')
  end
  since = tonumber(since)
else
  since = now
  redis.call('SET', KEYS[2], string.format('%.0f', now))
end
-- Attempts the store may have forgotten started at or before `since`; the
-- service forgets them by since + unknown_for.
local history_until = 0
if since > 0 then
  history_until = since + unknown_for
  if history_until > now + unknown_for then history_until = now + unknown_for end
end

local attempts, blocked, paused = {}, nil, nil
local h = redis.call('HGETALL', key)
for i = 1, #h, 2 do
  local k, v = h[i], h[i + 1]
  if k == 'b' then
    blocked = tonumber(v)
  elseif k == 'p' then
    paused = tonumber(v)
  elseif string.sub(k, 1, 2) == 'a:' then
    local s, f, u = string.match(v, '^(%d+),(%-?%d+),(%d+)$')
    if not s then
      return redis.error_reply('lockout entry ' .. k .. ' is corrupt')
    end
    f = tonumber(f)
    if f < 0 then f = nil end
    table.insert(attempts, { id = string.sub(k, 3), s = tonumber(s), f = f, u = tonumber(u) })
  else
    return redis.error_reply('lockout key holds an unknown field ' .. k)
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
  return { counted, refusal, wait, blocked_for, reserved, -1 }
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
  redis.call('DEL', key)
  local fields, last = {}, nil
  for _, a in ipairs(attempts) do
    table.insert(fields, 'a:' .. a.id)
    table.insert(fields, string.format('%.0f,%.0f,%.0f', a.s, a.f or -1, a.u))
    if not last or a.u > last then last = a.u end
  end
  if blocked then
    table.insert(fields, 'b')
    table.insert(fields, string.format('%.0f', blocked))
    if not last or blocked > last then last = blocked end
  end
  if paused then
    table.insert(fields, 'p')
    table.insert(fields, string.format('%.0f', paused))
    if not last or paused > last then last = paused end
  end
  if #fields > 0 then
    redis.call('HSET', key, unpack(fields))
    -- The whole entry expires when nothing in it counts any more.
    redis.call('PEXPIRE', key, math.floor((last - now) / 1000) + 1)
  end
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
  local info = redis.call('INFO', 'replication')
  result[6] = tonumber(string.match(info, 'connected_slaves:(%d+)')) or 0
elseif step == 'resolve' then
  local resolution = ARGV[8]
  local i = find(id)
  if resolution == 'succeeded' then
    if i then
      local started = attempts[i].s
      table.remove(attempts, i)
      local left = {}
      for _, a in ipairs(attempts) do
        if not (a.f and a.f < started) then table.insert(left, a) end
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
  local kind, wait = ARGV[8], tonumber(ARGV[9])
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
