-- Idem's claim records (docs/design.md, "The claim record"), one script for every operation:
-- ARGV[1] names it.
--
-- A record is one string, so a fresh claim is a single SET NX, a completion a single SET GET, and
-- other changes one GET and one SET (Redis 6.2 or newer):
--   done:       D
--   otherwise:  <s>|<owner>|<lease end ms>|<fence>|<attempts>|<failures>|<u>|<first failure ms>|<due ms>
--               \31<error>\31<compensation>\31<dead-letter reason>
-- s: C claimed, F failed or released, X dead-lettered.
-- u: 1 while the current claim's attempt is uncounted (counted with its outcome, or by 'count'
--    before the handler runs when the claim was taken over from an abandoned owner).
-- due: a record whose dead letter is decided but not yet published (reason set, s C or F) may not
--    be claimed before this time: a failing publish backs off per key, whatever the copies.
-- On X, owner and lease end hold the compensation while it runs (compensation 'pending').
-- Free text comes after \31. Times come from Redis TIME. Numbers are written with %d: Lua's
-- default format loses digits. A value under the prefix that is not a record is answered per key
-- ('?'), never by failing the whole batch.

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
  local s, o, l, f, a, n, u, ff, due, rest =
    string.match(v, '^([CFX])|([^|]*)|(%d*)|(%d*)|(%d*)|(%d*)|([01])|(%d*)|(%d*)(.*)$')
  if not s then return {s = '?'} end
  local e, cs, z = string.match(rest, '^' .. SEP .. '([^' .. SEP .. ']*)' .. SEP .. '([^' .. SEP .. ']*)'
    .. SEP .. '(.*)$')
  return {s = s, o = o, l = tonumber(l) or 0, f = tonumber(f) or 0, a = tonumber(a) or 0, n = tonumber(n) or 0,
          u = u, ff = ff, due = tonumber(due) or 0, e = e or '', cs = cs or '', z = z or ''}
end

local function encode(r)
  return r.s .. '|' .. (r.o or '') .. '|' .. d(r.l) .. '|' .. d(r.f) .. '|' .. d(r.a) .. '|' .. d(r.n) .. '|'
    .. r.u .. '|' .. (r.ff or '') .. '|' .. (r.due > 0 and d(r.due) or '')
    .. SEP .. (r.e or '') .. SEP .. (r.cs or '') .. SEP .. (r.z or '')
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

-- The epoch: when this Redis (or this cluster slot) began to keep Idem's records. Created on first
-- use; a Redis that lost its data starts a new epoch. A message born after the epoch began and
-- with no record was never claimed, whatever the broker's count says.
local function epoch(key, now)
  local e = tonumber(redis.call('GET', key))
  if not e then
    e = now
    redis.call('SET', key, d(e))
  end
  return e
end

local function claimed_reply(r, suspect, fresh)
  return 'C:' .. d(r.f) .. ':' .. d(r.a + (r.u == '1' and 1 or 0)) .. ':' .. d(r.n) .. ':'
    .. (suspect and '1' or '0') .. ':' .. (fresh and '1' or '0') .. ':' .. r.ff .. ':' .. r.e .. SEP .. r.z
end

-- claim: KEYS the records, then the epoch key of their slot. ARGV owner, lease ms, attempts-window
-- ms, then per key the broker's attempt floor and the message's born time (ms, 0 unknown).
-- Returns per key 'D' | 'X' | 'B:<ms left>' | '?' (unreadable) | 'K:<attempts>:<error>\31<reason>'
-- (a dead key whose compensation was cut off: the caller now holds it) |
-- 'C:<fence>:<attempt>:<failures>:<abandoned>:<fresh>:<ff>:<error>\31<dead-letter reason>'.
if op == 'claim' then
  local owner, lease, window = ARGV[2], tonumber(ARGV[3]), ARGV[4]
  local now, now_us = now_ms()
  local n = #KEYS - 1
  local began = epoch(KEYS[#KEYS], now)
  local fresh_value = 'C|' .. owner .. '|' .. d(now + lease) .. '|' .. d(now_us) .. '|0|0|1||' .. SEP .. SEP .. SEP
  local fresh_reply = 'C:' .. d(now_us) .. ':1:0:0:1::' .. SEP
  local out = {}
  for i = 1, n do
    local key = KEYS[i]
    local floor, born = tonumber(ARGV[3 + 2 * i]), tonumber(ARGV[4 + 2 * i])
    if floor <= 1 and redis.call('SET', key, fresh_value, 'PX', window, 'NX') then
      out[i] = fresh_reply
    else
      local r = decode(redis.call('GET', key))
      if r and (r.s == 'D') then
        out[i] = 'D'
      elseif r and r.s == '?' then
        out[i] = '?'
      elseif r and r.s == 'X' then
        if r.cs == 'pending' and (r.o == owner or r.l <= now) then
          r.o, r.l = owner, now + lease
          keep(key, r)
          out[i] = 'K:' .. d(r.a) .. ':' .. r.e .. SEP .. r.z
        elseif r.cs == 'pending' then
          -- Another owner runs the compensation: come back when its lease ends, in case it dies.
          out[i] = 'B:' .. d(r.l - now)
        else
          out[i] = 'X'
        end
      elseif r and r.s == 'C' and r.o == owner then
        -- Re-entrant: the same owner retrying after a timeout keeps its claim and fence. The first
        -- reply (lost) may have said abandoned or fresh: while the attempt is uncounted, say both,
        -- the safe reading (count before running; one real run before any dead letter).
        r.l = now + lease
        keep(key, r)
        out[i] = claimed_reply(r, r.u == '1', r.u == '1')
      elseif r and r.s == 'C' and r.l > now then
        out[i] = 'B:' .. d(r.l - now)
      elseif r and r.due > now then
        -- A dead letter whose publish failed: not before its backoff ends.
        out[i] = 'B:' .. d(r.due - now)
      else
        local fresh = (r == nil)
        -- A CLAIMED record whose lease ended was abandoned: its owner crashed or vanished.
        local abandoned = (r ~= nil and r.s == 'C')
        if fresh then
          -- Use the broker's count only where Redis may have lost the record.
          local lost = (born == 0 or born < began)
          r = {a = lost and math.max(0, floor - 1) or 0, n = 0, f = 0, ff = '', due = 0, e = '', cs = '', z = ''}
        end
        r.s, r.o, r.l, r.u, r.due = 'C', owner, now + lease, '1', 0
        r.f = math.max(r.f + 1, now_us)
        redis.call('SET', key, encode(r), 'PX', window)
        out[i] = claimed_reply(r, abandoned, fresh)
      end
    end
  end
  return out
end

-- count: ARGV owner, lease ms. Counts an uncounted claim's attempt before its handler runs, and
-- renews its lease: a claim whose lease ended but that nobody took over is still the owner's, and
-- from now on nobody can take it. Returns 1, or 0 if another owner holds it.
if op == 'count' then
  local r = owned(KEYS[1], ARGV[2])
  if not r then return 0 end
  if r.u == '1' then r.a, r.u = r.a + 1, '0' end
  r.l = now_ms() + tonumber(ARGV[3])
  keep(KEYS[1], r)
  return 1
end

-- renew: ARGV owner, lease ms. Renews claims and compensations held by owner.
-- Returns per key 1 (renewed) or 0 (lost).
if op == 'renew' then
  local now = now_ms()
  local out = {}
  for i, key in ipairs(KEYS) do
    local r = decode(redis.call('GET', key))
    out[i] = 0
    if r and (r.s == 'C' or (r.s == 'X' and r.cs == 'pending')) and r.o == ARGV[2] then
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
  if r.u == '1' then r.a = r.a + 1 end
  r.s, r.o, r.u, r.n, r.e = 'F', '', '0', r.n + 1, ARGV[3]
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
      r.s, r.o, r.u = 'F', '', '0'
      keep(key, r)
      out[i] = 1
    end
  end
  return out
end

-- doom: ARGV owner, reason, error ('' when none). Records, before the dead letter is published,
-- that it is decided: whoever holds the key next publishes it without running the handler.
-- Counts the attempt (and the failure, when there is an error), once: a key doomed already keeps its
-- first reason, error and count. Returns 1, or 0 if not the owner.
if op == 'doom' then
  local r = owned(KEYS[1], ARGV[2])
  if not r then return 0 end
  if r.z == '' then
    if r.u == '1' then r.a = r.a + 1 end
    if ARGV[4] ~= '' then
      r.n, r.e = r.n + 1, ARGV[4]
      if r.ff == '' then r.ff = d(now_ms()) end
    end
    r.z = ARGV[3]
  end
  r.u = '0'
  keep(KEYS[1], r)
  return 1
end

-- postpone: ARGV owner, delay ms. The dead letter could not be published: free the key, still
-- decided, and claimable again only after the delay. Returns 1, or 0 if not the owner.
if op == 'postpone' then
  local r = owned(KEYS[1], ARGV[2])
  if not r then return 0 end
  r.s, r.o, r.due = 'F', '', now_ms() + tonumber(ARGV[3])
  keep(KEYS[1], r)
  return 1
end

-- dead: ARGV owner, dead-window ms, compensation lease ms. Marks the key dead-lettered; the owner
-- holds its compensation until the outcome is recorded or the lease ends. Returns 1, or 0 if not the owner.
if op == 'dead' then
  local r = owned(KEYS[1], ARGV[2])
  if not r then return 0 end
  if r.u == '1' then r.a = r.a + 1 end
  r.s, r.u, r.cs, r.due, r.l = 'X', '0', 'pending', 0, now_ms() + tonumber(ARGV[4])
  redis.call('SET', KEYS[1], encode(r), 'PX', ARGV[3])
  return 1
end

-- compensated: ARGV owner, outcome. Records the outcome of a compensation the owner holds.
-- Returns 1, or 0 when another owner took the compensation over (or it was recorded already).
if op == 'compensated' then
  local r = decode(redis.call('GET', KEYS[1]))
  if not r or r.s ~= 'X' or r.cs ~= 'pending' or r.o ~= ARGV[2] then return 0 end
  r.cs, r.o, r.l = ARGV[3], '', 0
  keep(KEYS[1], r)
  return 1
end

-- inspect: returns {value or '', pttl}.
if op == 'inspect' then
  return {redis.call('GET', KEYS[1]) or '', d(redis.call('PTTL', KEYS[1]))}
end

return redis.error_reply('unknown operation ' .. tostring(op))
