-- Idem's claim records (DESIGN §3), one script for every operation: ARGV[1] names it.
--
-- A record is one string, so a fresh claim is a single SET NX, a completion a single SET GET, and
-- other changes one GET and one SET (Redis 6.2 or newer):
--   done:       D
--   otherwise:  <s>|<owner>|<lease end ms>|<fence>|<attempts>|<failures>|<t>|<first failure ms>\31<error>\31<compensation>
-- s: C claimed, F failed or released, X dead. t: 1 while the current claim's attempt is not
-- counted yet (a tentative batch claim). Error and compensation are free text after \31.
-- Times come from Redis TIME. Numbers are written with %d: Lua's default format loses digits.

local op = ARGV[1]
local SEP = '\31'
local function d(x) return string.format('%d', x) end
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000), tonumber(t[1]) * 1000000 + tonumber(t[2])
end

local function decode(v)
  if not v then return nil end
  if v == 'D' then return {s = 'D'} end
  local s, o, l, f, a, n, t, ff, rest = string.match(v, '^(%a)|([^|]*)|(%d*)|(%d*)|(%d*)|(%d*)|(%d)|(%d*)(.*)$')
  local e, cs = string.match(rest, '^' .. SEP .. '(.*)' .. SEP .. '(.*)$')
  return {s = s, o = o, l = tonumber(l) or 0, f = tonumber(f) or 0, a = tonumber(a) or 0, n = tonumber(n) or 0,
          t = t, ff = ff, e = e or '', cs = cs or ''}
end

local function encode(r)
  return r.s .. '|' .. (r.o or '') .. '|' .. d(r.l) .. '|' .. d(r.f) .. '|' .. d(r.a) .. '|' .. d(r.n) .. '|'
    .. r.t .. '|' .. (r.ff or '') .. SEP .. (r.e or '') .. SEP .. (r.cs or '')
end

-- Rewrites a record in place, keeping its time to live.
local function keep(key, r)
  redis.call('SET', key, encode(r), 'KEEPTTL')
end

local function owned(key, owner)
  local r = decode(redis.call('GET', key))
  if r and r.s == 'C' and r.o == owner then return r end
  return nil
end

-- claim: ARGV owner, lease ms, firm 1/0, attempts-window ms, then one attempt floor per key.
-- Returns per key 'D' | 'X' | 'B:<ms left>' | 'C:<fence>:<attempt>:<failures>:<suspect>:<fresh>:<ff>'.
if op == 'claim' then
  local owner, lease, firm, window = ARGV[2], tonumber(ARGV[3]), ARGV[4] == '1', ARGV[5]
  local now, now_us = now_ms()
  local t = firm and '0' or '1'
  local fresh_value = 'C|' .. owner .. '|' .. d(now + lease) .. '|' .. d(now_us) .. '|' .. (firm and '1' or '0')
    .. '|0|' .. t .. '|' .. SEP .. SEP
  local fresh_reply = 'C:' .. d(now_us) .. ':1:0:0:1:'
  local out = {}
  for i, key in ipairs(KEYS) do
    local floor = tonumber(ARGV[5 + i])
    if floor <= 1 and redis.call('SET', key, fresh_value, 'PX', window, 'NX') then
      out[i] = fresh_reply
    else
      local r = decode(redis.call('GET', key))
      if r and r.s == 'D' then
        out[i] = 'D'
      elseif r and r.s == 'X' then
        out[i] = 'X'
      elseif r and r.s == 'C' and r.o == owner then
        -- Re-entrant: the same owner retrying after a timeout keeps its claim and fence.
        r.l = now + lease
        keep(key, r)
        out[i] = 'C:' .. d(r.f) .. ':' .. d(r.a + (r.t == '1' and 1 or 0)) .. ':' .. d(r.n) .. ':0:0:' .. r.ff
      elseif r and r.s == 'C' and r.l > now then
        out[i] = 'B:' .. d(r.l - now)
      else
        local fresh = (r == nil)
        -- A CLAIMED record whose lease ended was abandoned: its owner crashed or vanished.
        local suspect = (r ~= nil and r.s == 'C')
        if fresh then r = {a = math.max(0, floor - 1), n = 0, f = 0, ff = '', e = '', cs = ''} end
        r.s, r.o, r.l, r.t = 'C', owner, now + lease, t
        r.f = math.max(r.f + 1, now_us)
        if firm then r.a = r.a + 1 end
        redis.call('SET', key, encode(r), 'PX', window)
        out[i] = 'C:' .. d(r.f) .. ':' .. d(firm and r.a or r.a + 1) .. ':' .. d(r.n) .. ':'
          .. (suspect and '1' or '0') .. ':' .. (fresh and '1' or '0') .. ':' .. r.ff
      end
    end
  end
  return out
end

-- start: ARGV owner. Counts a tentative claim's attempt before its handler runs. Returns 1 or 0.
if op == 'start' then
  local r = owned(KEYS[1], ARGV[2])
  if not r then return 0 end
  if r.t == '1' then
    r.a, r.t = r.a + 1, '0'
    keep(KEYS[1], r)
  end
  return 1
end

-- renew: ARGV owner, lease ms. Returns per key 1 (renewed) or 0 (lost).
if op == 'renew' then
  local now = now_ms()
  local out = {}
  for i, key in ipairs(KEYS) do
    local r = owned(key, ARGV[2])
    out[i] = 0
    if r then
      r.l = now + tonumber(ARGV[3])
      keep(key, r)
      out[i] = 1
    end
  end
  return out
end

-- complete: ARGV owner, done-window ms, attempts-window ms. Returns per key 1 (done) or 0 (refused:
-- not the owner). One command in the usual case: SET ... GET writes D and returns what it replaced;
-- when that was not this owner's claim (a lost lease, rare), the old record is put back.
if op == 'complete' then
  local claimed_by_owner = 'C|' .. ARGV[2] .. '|'
  local length = #claimed_by_owner
  local out = {}
  for i, key in ipairs(KEYS) do
    local old = redis.call('SET', key, 'D', 'PX', ARGV[3], 'GET')
    if old == 'D' or (old and string.sub(old, 1, length) == claimed_by_owner) then
      out[i] = 1
    else
      out[i] = 0
      if not old then
        redis.call('DEL', key)
      else
        redis.call('SET', key, old, 'PX', string.sub(old, 1, 1) == 'X' and ARGV[3] or ARGV[4])
      end
    end
  end
  return out
end

-- fail: ARGV owner, error, attempts-window ms. Counts the failure and frees the key.
-- Returns 'attempts:failures:first failure ms', or '' if not the owner.
if op == 'fail' then
  local r = owned(KEYS[1], ARGV[2])
  if not r then return '' end
  local now = now_ms()
  if r.t == '1' then r.a = r.a + 1 end
  r.s, r.o, r.t, r.n, r.e = 'F', '', '0', r.n + 1, ARGV[3]
  if r.ff == '' then r.ff = d(now) end
  redis.call('SET', KEYS[1], encode(r), 'PX', ARGV[4])
  return d(r.a) .. ':' .. d(r.n) .. ':' .. r.ff
end

-- release: ARGV owner. Frees claims whose handler never started, counting nothing. Returns per key 1/0.
if op == 'release' then
  local out = {}
  for i, key in ipairs(KEYS) do
    local r = owned(key, ARGV[2])
    out[i] = 0
    if r then
      r.s, r.o, r.t = 'F', '', '0'
      keep(key, r)
      out[i] = 1
    end
  end
  return out
end

-- dead: ARGV owner, error ('' when none), dead-window ms. Returns 1, or 0 if not the owner.
if op == 'dead' then
  local r = owned(KEYS[1], ARGV[2])
  if not r then return 0 end
  if r.t == '1' then r.a = r.a + 1 end
  if ARGV[3] ~= '' then r.n, r.e = r.n + 1, ARGV[3] end
  r.s, r.o, r.t, r.cs = 'X', '', '0', 'pending'
  redis.call('SET', KEYS[1], encode(r), 'PX', ARGV[4])
  return 1
end

-- compensated: ARGV outcome. Records it on a dead key. Returns 1 or 0.
if op == 'compensated' then
  local r = decode(redis.call('GET', KEYS[1]))
  if not r or r.s ~= 'X' then return 0 end
  r.cs = ARGV[2]
  keep(KEYS[1], r)
  return 1
end

-- inspect: returns {value or '', pttl}.
if op == 'inspect' then
  return {redis.call('GET', KEYS[1]) or '', d(redis.call('PTTL', KEYS[1]))}
end

return redis.error_reply('unknown operation ' .. tostring(op))
