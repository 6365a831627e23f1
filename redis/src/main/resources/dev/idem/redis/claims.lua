-- Idem's claim records (docs/design.md, "The claim record"), one script for every operation:
-- ARGV[1] names it.
--
-- A record is one string, so a fresh claim is a single SET NX, and other changes one GET and one SET
-- (Redis 6.2 or newer):
--   done:       D
--   reset:      R  (read as no record; see RESET)
--   compact:    b<batch id><place>  (an id of 9 characters [0-9A-Za-z], the key's place in its
--               claim call's keys in 2 more, base 62): a fresh claim, read through its batch
--               record <batch prefix><batch id> in the same slot, which holds
--               L|<owner>|<lease end ms>|<fence>[|<done places>] (T instead of L once another owner
--               took a key of the batch over; done places: hexadecimal digits, bit p of the whole set
--               when the key at place p was completed before the rest of its batch, decision 0058),
--               or D|<done until ms> once its owner completed every compact key of the batch; after
--               that time its keys read as no record, as a D would have lapsed.
--               c<batch id of 11 characters>: the same without a place (records of earlier versions)
--   otherwise:  <s>|<owner>|<lease end ms>|<fence>|<attempts>|<failures>|<u>|<first failure ms>|<due ms>
--               \31<error>\31<compensation>\31<dead-letter reason>
-- s: C claimed, F failed or released, X dead-lettered.
-- u: 1 while the current claim's attempt is uncounted (counted with its outcome, or by 'count'
--    before the handler runs when the claim was taken over from an abandoned owner).
-- due: a record whose dead letter is decided but not yet published (reason set, s C or F) may not
--    be claimed before this time: a failing publish backs off per key, whatever the copies.
-- On X, owner and lease end hold the compensation while it runs (compensation 'pending').
-- Free text comes after \31. Times come from Redis TIME. Numbers are written with %d: Lua's
-- default format loses digits. A value under the prefix that is not a record, or a key of another
-- type, is answered per key (a claim's '?', a completion's 0), never by failing the whole call.
-- A compact key is rewritten as a full record by any change but a completion by its owner (of its
-- whole batch, or of its place); docs/decisions/0033 says why a batch record never covers a key still
-- running, 0058 why a place marked stands only for a key its owner finished.
--
-- Every operation ends its arguments with the pending-compensation index of the slot it runs in,
-- the attempts window (ms) and the batch prefix of that slot. The index (a sorted set of the slot's
-- dead keys whose compensation has no outcome, by when they died) lets an operator list them
-- without scanning every key; an entry whose record changed since is dropped by its reader. It is
-- written with pcall: during a slot migration it may be on the other node, and a missed entry costs
-- only the listing (a redelivery still takes the compensation over).

local op = ARGV[1]
local SEP = '\31'
local BP = ARGV[#ARGV]
local AW = tonumber(ARGV[#ARGV - 1])
local PENDING = ARGV[#ARGV - 2]
-- Only on a cluster does a batch prefix name its slot (a hash tag), and only there can a batch record
-- be on its way from another node (a slot migration): elsewhere a batch record missing is one lost.
local SLOTTED = string.sub(BP, -2) == '}:'
local function d(x) return string.format('%d', x) end
-- A compact key's place in its batch: two base-62 digits (at most 3,844 keys per batch record).
local B62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
local function place_of(p)
  return (string.find(B62, string.sub(p, 1, 1), 1, true) - 1) * 62 + string.find(B62, string.sub(p, 2, 2), 1, true) - 1
end
local function place_text(i)
  local hi, lo = math.floor(i / 62), i % 62
  return string.sub(B62, hi + 1, hi + 1) .. string.sub(B62, lo + 1, lo + 1)
end
-- A compact value's batch id and place (nil for a value of the first format, which has none), or nil.
local function compact_ref(v)
  local id, p = string.match(v, '^b(%w%w%w%w%w%w%w%w%w)(%w%w)$')
  if id then return id, place_of(p) end
  return string.match(v, '^c(%w%w%w%w%w%w%w%w%w%w%w)$'), nil
end
-- Whether place p is in a batch record's done places (hexadecimal, 4 places per digit, first digit
-- places 0-3).
local function is_done(places, p)
  local digit = tonumber(string.sub(places, math.floor(p / 4) + 1, math.floor(p / 4) + 1), 16)
  return digit ~= nil and math.floor(digit / 2 ^ (p % 4)) % 2 == 1
end
-- The done places with places ps added.
local function with_done(places, ps)
  local digits = {}
  for i = 1, #places do digits[i] = tonumber(string.sub(places, i, i), 16) end
  for _, p in ipairs(ps) do
    local i = math.floor(p / 4) + 1
    for j = #digits + 1, i do digits[j] = 0 end
    local b = 2 ^ (p % 4)
    if math.floor(digits[i] / b) % 2 == 0 then digits[i] = digits[i] + b end
  end
  for i = 1, #digits do digits[i] = string.format('%x', digits[i]) end
  return table.concat(digits)
end
-- A batch record still claimed: type (L or T), owner, lease end, fence, done places; nil otherwise.
local function claimed_batch(b)
  return string.match(b, '^([LT])|([^|]*)|(%d+)|(%d+)|?(%x*)$')
end
-- What an operator's reset leaves (ClaimAdmin.reset): no record to every operation, but a completion
-- still on its way from a run before the reset is refused, for this long, instead of writing done.
local RESET, RESET_MS = 'R', 300000
-- Redis TIME, read once per call (a script runs at one instant).
local clock = nil
local function now_ms()
  if not clock then
    local t = redis.call('TIME')
    clock = {tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000), tonumber(t[1]) * 1000000 + tonumber(t[2])}
  end
  return clock[1], clock[2]
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

-- A key's record, or nil when it has none. A compact key is read through its batch record: claimed
-- by the batch's owner under the batch's lease, uncounted, or done. The batch record outlives its
-- keys. On a cluster a compact key without one is not understood ('?'), never taken for a missing
-- record: its batch record may be on its way to this node (a slot migration). Elsewhere it was lost
-- (evicted, deleted), and the key reads as lost with it, as a full record evicted would
-- (docs/decisions/0039).
-- A key of another type under the prefix (a hash another application wrote there) makes a GET, or a
-- SET that returns what it replaced, raise WRONGTYPE, which would fail every key of the call: such
-- a key reads as not understood ('?') instead, and is left as it is. redis.pcall answers an error as
-- a table on every version; any other error is raised again, with its code (OOM, READONLY...).
local V7 = (redis.REDIS_VERSION_NUM or 0) >= 0x070000
local WRONG_TYPE = {}
local function typed_call(...)
  local r = redis.pcall(...)
  if type(r) == 'table' and r.err then
    if string.find(r.err, 'WRONGTYPE', 1, true) then return WRONG_TYPE end
    if V7 then error(r) end
    error(r.err, 0)
  end
  return r
end

-- A batch record, false when this node does not hold it, or nil when it cannot tell: during a cluster
-- resharding, reading a key this node no longer holds raises an error, and a script's writes made
-- before an error stay. Read with pcall, so no script fails after it wrote.
local function batch_record(id)
  local ok, b = pcall(redis.call, 'GET', BP .. id)
  if not ok or type(b) == 'table' then return nil end
  return b
end

-- v: the key's value when the caller has read it already (a SET NX GET that found it). records: the
-- batch records this call has read, by id, kept by the claim op only (a claim of copies whose keys
-- share a few batch records reads each once); the claim op drops one from there when it writes it.
local function load(key, v, records)
  if not v then v = typed_call('GET', key) end
  if v == WRONG_TYPE then return {s = '?'} end
  if not v or v == RESET then return nil end
  local id, p = compact_ref(v)
  if not id then return decode(v) end
  local b = records and records[id]
  if not b then
    b = batch_record(id)
    if records and b then records[id] = b end
  end
  if b == false and not SLOTTED then return nil end
  if not b then return {s = '?'} end
  local done_until = string.match(b, '^D|(%d+)$')
  if done_until then
    if tonumber(done_until) <= now_ms() then return nil end
    return {s = 'D', until_ms = tonumber(done_until)}
  end
  local t, o, l, f, places = claimed_batch(b)
  if not t then return {s = '?'} end
  -- Completed before the rest of its batch: done as long as the key lives (its time to live).
  if p and is_done(places, p) then return {s = 'D'} end
  return {s = 'C', o = o, l = tonumber(l), f = tonumber(f), a = 0, n = 0, u = '1', ff = '', due = 0, e = '', cs = '',
          z = '', batch = id, bt = t, places = places}
end

-- A claimed batch record's value; the done places it had are kept.
local function batch_text(t, o, l, f, places)
  return t .. '|' .. o .. '|' .. l .. '|' .. f .. (places ~= '' and '|' .. places or '')
end
local function batch_value(t, r)
  return batch_text(t, r.o, d(r.l), d(r.f), r.places)
end

-- Rewrites a record in place, keeping its time to live; a compact key becomes a full record that
-- lives the attempts window (at least twice what is left of its lease).
local function keep(key, r)
  if r.batch then
    redis.call('SET', key, encode(r), 'PX', math.max(AW, 2 * (r.l - now_ms())))
  else
    redis.call('SET', key, encode(r), 'KEEPTTL')
  end
end

local function owned(key, owner)
  local r = load(key)
  if r and r.s == 'C' and r.o == owner then return r end
  return nil
end

-- The epoch: when this Redis (or this cluster slot) began to keep Idem's records. Created on first
-- use; a Redis that lost its data starts a new epoch. A message born after the epoch began and
-- with no record was never claimed, whatever the broker's count says.
-- An epoch key of another type reads as a loss that has just happened: the broker's count is used.
local function epoch(key, now)
  local e = typed_call('GET', key)
  if e == WRONG_TYPE then return now end
  e = tonumber(e)
  if not e then
    e = now
    redis.call('SET', key, d(e))
  end
  return e
end

-- Free text as a reply carries it: without \30, which joins a call's replies.
local function plain(t) return (string.gsub(t, '\30', ' ')) end

local function claimed_reply(r, suspect, fresh)
  return 'C:' .. d(r.f) .. ':' .. d(r.a + (r.u == '1' and 1 or 0)) .. ':' .. d(r.n) .. ':'
    .. (suspect and '1' or '0') .. ':' .. (fresh and '1' or '0') .. ':' .. r.ff .. ':' .. plain(r.e) .. SEP .. plain(r.z)
end

-- claim: KEYS the records, then the epoch key of their slot, then a new batch record. ARGV owner,
-- lease ms, attempts-window ms (of a full claim), compact window ms (of a compact claim: the done
-- window plus the hour in which its batch may complete, as its completion may not rewrite it), batch id ('' for full
-- records), then one argument for all keys: per key '<broker's attempt floor>:<born time ms, 0
-- unknown>', joined by ',' (one argument rather than two per key: each costs the client and Redis).
-- Returns per key 'D' | 'X' | 'B:<ms left>' | '?' (unreadable) | 'K:<attempts>:<fence>:<error>\31<reason>'
-- (a dead key whose compensation was cut off: the caller now holds it) |
-- 'C:<fence>:<attempt>:<failures>:<abandoned>:<fresh>:<ff>:<error>\31<dead-letter reason>', or the
-- same with 'c' for a fresh key claimed compact, in the batch record: the call's first such key
-- only; the others, whose reply would be the same, get 'c' alone (one byte instead of about 25).
-- A call of several keys returns one string, the keys' replies joined by \30 (each reply of a list
-- costs the client a string for its length); a reply's free text never holds \30.
-- claim1: one key alone, KEYS its record only, the same ARGV (batch id '') then the name of its slot's
-- epoch key. For a slot being migrated: a call naming several keys there, some missing, gets TRYAGAIN
-- for the whole migration, while one key is served (or redirected) as it is. The epoch is read, never
-- created (it may be on the other node); unknown, a fresh key's broker count is used as after a loss.
-- Redis 7.0 and newer answer a SET NX with the value it found instead of writing (SET ... NX GET):
-- a claim of a key that is not fresh (a copy, a redelivery) then costs one command, not two.
local NX_GET = V7
-- SET NX: whether it wrote the key, and the value it found instead when the server says (else nil).
local function set_nx(key, value, px)
  if NX_GET then
    local found = typed_call('SET', key, value, 'PX', px, 'NX', 'GET')
    if found then return false, found end
    return true, nil
  end
  return redis.call('SET', key, value, 'PX', px, 'NX') and true or false, nil
end

if op == 'claim' or op == 'claim1' then
  local single = (op == 'claim1')
  local owner, lease, window, compact_window, id = ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4]), ARGV[5], ARGV[6]
  -- No id: the caller wants full records (too few keys in this slot for a batch record to pay).
  local n = single and 1 or #KEYS - 2
  -- A place is two base-62 digits: a larger call writes full records.
  if single or n > 3844 then id = '' end
  local floors, borns = {}, {}
  for f, b in string.gmatch(ARGV[7], '(%d+):(%d+)') do
    floors[#floors + 1], borns[#borns + 1] = tonumber(f), tonumber(b)
  end
  -- Checked before anything is written.
  if #floors ~= n then
    return redis.error_reply('claim: ' .. #floors .. ' floor:born pairs for ' .. n .. ' keys')
  end
  local now, now_us = now_ms()
  local batch_key = KEYS[#KEYS]
  local began
  if single then
    local ok, e = pcall(redis.call, 'GET', ARGV[8])
    began = (ok and e and tonumber(e)) or now
  else
    began = epoch(KEYS[n + 1], now)
  end
  local fresh_value = 'C|' .. owner .. '|' .. d(now + lease) .. '|' .. d(now_us) .. '|0|0|1||' .. SEP .. SEP .. SEP
  local fresh_reply = ':' .. d(now_us) .. ':1:0:0:1::' .. SEP
  -- The batch record is created with the first fresh key, with SET NX: an id in use is refused
  -- before any key names it, and this call then writes full records.
  local batch = nil
  local compact_value = 'b' .. id
  local used = false
  local out = {}
  local records = {}
  for i = 1, n do
    local key = KEYS[i]
    local floor, born = floors[i], borns[i]
    if floor <= 1 and batch == nil and id == '' then
      batch = 'full'
    elseif floor <= 1 and batch == nil then
      batch = redis.call('SET', batch_key, 'L|' .. owner .. '|' .. d(now + lease) .. '|' .. d(now_us),
        'PX', d(compact_window + 60000), 'NX') and 'compact' or 'full'
    end
    -- A first delivery tries the fresh claim; the value it found instead, if the server said, is read.
    local wrote, found = false, nil
    if floor <= 1 and batch == 'compact' then
      wrote, found = set_nx(key, compact_value .. place_text(i - 1), compact_window)
    elseif floor <= 1 and batch == 'full' then
      wrote, found = set_nx(key, fresh_value, window)
    end
    if wrote and batch == 'compact' then
      out[i] = used and 'c' or 'c' .. fresh_reply
      used = true
    elseif wrote then
      out[i] = 'C' .. fresh_reply
    else
      local r = load(key, found, records)
      if r and r.batch and r.o ~= owner and r.l <= now then
        -- A compact claim abandoned by its owner: taken over as a full record, and its batch record
        -- marked, so that the old owner's completion of the batch falls back to key by key.
        redis.call('SET', BP .. r.batch, batch_value('T', r), 'KEEPTTL')
        records[r.batch] = nil
        -- Counts older than the attempts window are forgotten, as a full record would have lapsed.
        if now_us - r.f > window * 1000 then r = nil end
      end
      if r and (r.s == 'D') then
        out[i] = 'D'
      elseif r and r.s == '?' then
        out[i] = '?'
      elseif r and r.s == 'X' then
        if r.cs == 'pending' and (r.o == owner or r.l <= now) then
          r.o, r.l = owner, now + lease
          keep(key, r)
          pcall(redis.call, 'ZADD', PENDING, 'NX', now, key)
          out[i] = 'K:' .. d(r.a) .. ':' .. d(r.f) .. ':' .. plain(r.e) .. SEP .. plain(r.z)
        elseif r.cs == 'pending' then
          -- Another owner runs the compensation: come back when its lease ends, in case it dies.
          out[i] = 'B:' .. d(r.l - now)
        else
          out[i] = 'X'
        end
      elseif r and r.s == 'C' and r.o == owner then
        -- Re-entrant: the same owner retrying after a timeout keeps its claim and fence (a compact
        -- claim becomes a full record). The first reply (lost) may have said abandoned or fresh:
        -- while the attempt is uncounted, say both, the safe reading (count before running; one real
        -- run before any dead letter).
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
        -- A key decided for the dead letter keeps the fence of the claim that decided it: no handler
        -- runs under its later claims, and the fence names the dead-lettering (its compensation id).
        if r.z == '' then r.f = math.max(r.f + 1, now_us) end
        redis.call('SET', key, encode(r), 'PX', window)
        out[i] = claimed_reply(r, abandoned, fresh)
      end
    end
  end
  if batch == 'compact' and not used then redis.call('DEL', batch_key) end
  if n == 1 then return out end
  return {table.concat(out, '\30')}
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

-- renew: ARGV owner, lease ms, then one character per key: 'k' a key, 'r' a batch record of the
-- owner's whose compact keys the caller renews all at once (decision 0058), then how long after its
-- claim a batch record may stand for its keys (they live longer than that).
-- Renews claims and compensations held by owner. Returns per key 1 (renewed) or 0 (lost); for a
-- batch record, 1 when it is still the owner's, no key of it was taken over or reset (L), and it is
-- young enough that its keys still live, so every key still compact in it is the owner's; 0
-- otherwise (renew its keys one by one).
-- A compact key's lease is its batch's: renewing it renews the batch record, once per call.
if op == 'renew' then
  local now = now_ms()
  local out = {}
  local renewed = {}
  local flags = ARGV[4]
  for i, key in ipairs(KEYS) do
    out[i] = 0
    if string.sub(flags, i, i) == 'r' then
      local b = redis.call('GET', key)
      local t, o, l, f, places = nil, nil, nil, nil, nil
      if b then t, o, l, f, places = claimed_batch(b) end
      if t == 'L' and o == ARGV[2] and now - math.floor(tonumber(f) / 1000) <= tonumber(ARGV[5]) then
        redis.call('SET', key, batch_text('L', o, d(now + tonumber(ARGV[3])), f, places), 'KEEPTTL')
        out[i] = 1
      end
    else
      local r = load(key)
      if r and (r.s == 'C' or (r.s == 'X' and r.cs == 'pending')) and r.o == ARGV[2] then
        r.l = now + tonumber(ARGV[3])
        if not r.batch then
          keep(key, r)
        elseif not renewed[r.batch] then
          redis.call('SET', BP .. r.batch, batch_value(r.bt, r), 'KEEPTTL')
          renewed[r.batch] = true
        end
        out[i] = 1
      end
    end
  end
  return out
end

-- A key written done by the completion's SET ... GET, given what it replaced ('old', nil for no
-- record): 1 or 2 when it was this owner's to complete, else 0, with the old value put back.
-- claimed_by: 'C|<owner>|', made once per call.
local function completed_key(key, old, owner, claimed_by, own_compact)
  local mine = not old or old == 'D' or string.sub(old, 1, #claimed_by) == claimed_by
  local id, p = nil, nil
  if old and old ~= own_compact then id, p = compact_ref(old) end
  local b = id and batch_record(id)
  if old and old == own_compact then
    mine = true
  elseif id then
    -- Done already (its batch, or its place), or claimed by this owner.
    mine = b and (string.sub(b, 1, 2) == 'D|' or string.sub(b, 3, 2 + #owner + 1) == owner .. '|'
      or (p ~= nil and claimed_batch(b) ~= nil and is_done(select(5, claimed_batch(b)), p)))
  end
  if mine then return old and 1 or 2 end
  if old == RESET then
    redis.call('SET', key, old, 'PX', RESET_MS)
  elseif b then
    -- Another owner's compact key: back with the time it had left (its batch record's, less the minute).
    redis.call('SET', key, old, 'PX', d(math.max(1, redis.call('PTTL', BP .. id) - 60000)))
  elseif id then
    -- A compact key whose batch record is elsewhere: back with the longest time it can have had.
    redis.call('SET', key, old, 'PX', ARGV[8])
  else
    redis.call('SET', key, old, 'PX', string.sub(old, 1, 1) == 'X' and ARGV[3] or ARGV[4])
  end
  return 0
end

-- complete: ARGV owner, done-window ms, attempts-window ms, then one character per key: 'k' a key,
-- 'm' a key this owner claimed compact (its compact value without the leading 'b' follows in the id
-- list), 'b' a batch record whose every compact key this owner completes now (the caller knows it),
-- 'p' a batch record some of whose compact keys this owner completes now, before the rest (their
-- places follow in the place lists); then how long after its claim a batch record may still complete
-- (its keys live the done window longer), then the 'm' keys' compact values, 11 characters each, in
-- order, then the longest time a compact key can have, then the places of each 'p' record, two
-- base-62 digits each, the records' lists in order and joined by ','.
-- Returns per key 1 (done), 2 (done, and it had no record) or 0 (refused: another owner's, or dead;
-- for a batch record, complete its keys one by one). A 'p' record keeps its owner, lease and fence
-- and gains the places (decision 0058): one write however few of its keys finished, so a batch that
-- completes on the way (a slow poll, a completion timer round) costs what a whole one does. A key with no record is written done: its owner applied the effect, and the
-- record was lost under it (a failover, a restart, an eviction); refusing would leave the finished
-- key to run again (docs/decisions/0051). A key an operator reset is refused (RESET). One command in the usual case: SET ... GET writes D and
-- returns what it replaced; when that was another owner's (a lost lease, rare), the old value is
-- put back. A key that still names the owner's own batch is the owner's, whatever its batch record
-- says or wherever it is: only a takeover rewrites a compact key, and ids are never reused (SET NX).
if op == 'complete' then
  local owner, flags, within, ids = ARGV[2], ARGV[5], tonumber(ARGV[6]), ARGV[7]
  local claimed_by_owner = 'C|' .. owner .. '|'
  local out = {}
  local m = 0
  local parts = {}
  for list in string.gmatch(ARGV[9] .. ',', '([^,]*),') do parts[#parts + 1] = list end
  local part = 0
  for i, key in ipairs(KEYS) do
    local flag = string.sub(flags, i, i)
    local own_compact = nil
    if flag == 'm' then
      own_compact = 'b' .. string.sub(ids, m * 11 + 1, m * 11 + 11)
      m = m + 1
    end
    if flag == 'p' then
      part = part + 1
      local ps = {}
      local list = parts[part] or ''
      for j = 1, #list - 1, 2 do ps[#ps + 1] = place_of(string.sub(list, j, j + 1)) end
      local old = redis.call('GET', key)
      local t, o, l, f, places = nil, nil, nil, nil, nil
      if old then t, o, l, f, places = claimed_batch(old) end
      if old and string.sub(old, 1, 2) == 'D|' then
        out[i] = 1
      elseif t == 'L' and o == owner and now_ms() - math.floor(tonumber(f) / 1000) <= within then
        redis.call('SET', key, batch_text('L', o, l, f, with_done(places, ps)), 'KEEPTTL')
        out[i] = 1
      else
        -- Another owner took a key of the batch over, the record is lost, or it is too late for its
        -- keys' time to live: the caller completes these keys one by one.
        out[i] = 0
      end
    elseif flag == 'b' then
      local now = now_ms()
      local old = redis.call('SET', key, 'D|' .. d(now + tonumber(ARGV[3])), 'KEEPTTL', 'GET')
      local o, f = nil, nil
      if old then o, f = string.match(old, '^L|([^|]*)|%d+|(%d+)|?%x*$') end
      if o == owner and now - math.floor(tonumber(f) / 1000) <= within then
        out[i] = 1
      else
        -- Done already (a completion sent again), another owner's, or too late for its keys' time
        -- to live: put back; the caller completes its keys one by one.
        out[i] = (old and string.sub(old, 1, 2) == 'D|') and 1 or 0
        if not old then redis.call('DEL', key) else redis.call('SET', key, old, 'KEEPTTL') end
      end
    else
      local old = typed_call('SET', key, 'D', 'PX', ARGV[3], 'GET')
      -- Replaced by a key of another type while it ran: left as it is, not completed.
      out[i] = (old == WRONG_TYPE) and 0 or completed_key(key, old, owner, claimed_by_owner, own_compact)
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

-- release: ARGV owner, then one flag per key ('c': a claim taken over from a crashed owner; '-'
-- otherwise; none: every key '-'). Frees claims whose handler never started. A 'c' key is left as its
-- crashed owner left it, abandoned (its lease ended, no owner), so the next claim takes it over and
-- counts its own run before it starts: a crash is neither erased by a takeover given up unrun nor
-- counted for a run that never started (a poll held but never begun). A compensation the owner holds
-- and never started ends its lease, the key still dead-lettered. Returns per key 1/0.
if op == 'release' then
  local out = {}
  local flags = ARGV[3]
  for i, key in ipairs(KEYS) do
    local r = load(key)
    out[i] = 0
    if r and r.o == ARGV[2] and r.s == 'C' then
      if string.sub(flags, i, i) == 'c' then
        -- Its handler never started: a count made for it (whose reply was lost, or before a check
        -- that then failed) is taken back, and the next claim counts its own run.
        if r.u == '0' then r.a = r.a - 1 end
        r.o, r.l, r.u = '', 0, '1'
      else
        r.s, r.o, r.u = 'F', '', '0'
      end
      keep(key, r)
      out[i] = 1
    elseif r and r.o == ARGV[2] and r.s == 'X' and r.cs == 'pending' then
      -- No owner: a renewal of it already on its way, or a late outcome, finds it no longer held.
      r.o, r.l = '', 0
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

-- dead: ARGV owner, dead-window ms, compensation lease ms, fence ('' for the claim's own). Marks the
-- key dead-lettered; the owner holds its compensation until the outcome is recorded or the lease ends.
-- A fence given names the dead-lettering when it is older than this claim (a compensation recovered
-- after Redis lost the record keeps the fence its ledger recorded, which its id is made of).
-- Returns 1, or 0 if not the owner.
if op == 'dead' then
  local r = owned(KEYS[1], ARGV[2])
  if not r then return 0 end
  if r.u == '1' then r.a = r.a + 1 end
  if ARGV[5] ~= '' then r.f = tonumber(ARGV[5]) end
  r.s, r.u, r.cs, r.due, r.l = 'X', '0', 'pending', 0, now_ms() + tonumber(ARGV[4])
  redis.call('SET', KEYS[1], encode(r), 'PX', ARGV[3])
  -- The index never fails the mark (during a slot migration it may be on the other node).
  pcall(redis.call, 'ZADD', PENDING, now_ms(), KEYS[1])
  return 1
end

-- compensated: ARGV owner, outcome. Records the outcome of a compensation the owner holds.
-- Returns 1, or 0 when another owner took the compensation over (or it was recorded already).
if op == 'compensated' then
  local r = load(KEYS[1])
  if not r or r.s ~= 'X' or r.cs ~= 'pending' or r.o ~= ARGV[2] then return 0 end
  r.cs, r.o, r.l = ARGV[3], '', 0
  keep(KEYS[1], r)
  pcall(redis.call, 'ZREM', PENDING, KEYS[1])
  return 1
end

-- unindex: drops the key from its slot's pending-compensation index unless its compensation is still
-- pending (an entry left by a record that expired, was reset, or was lost). Returns 1 if dropped.
if op == 'unindex' then
  local r = load(KEYS[1])
  if r and r.s == 'X' and r.cs == 'pending' then return 0 end
  return redis.call('ZREM', PENDING, KEYS[1])
end

-- reset: an operator forgets a key (ClaimAdmin.reset), leaving RESET for RESET_MS. Returns 1.
-- A compact key leaves its batch: its batch record is marked T, as by a takeover, so its owner's
-- renewal, marks and whole completion of the batch go key by key and find the key no longer its own.
if op == 'reset' then
  local v = redis.call('GET', KEYS[1])
  local id = v and compact_ref(v)
  if id then
    local b = batch_record(id)
    local t, o, l, f, places = nil, nil, nil, nil, nil
    if b then t, o, l, f, places = claimed_batch(b) end
    if t == 'L' then
      pcall(redis.call, 'SET', BP .. id, batch_text('T', o, l, f, places), 'KEEPTTL')
    end
  end
  redis.call('SET', KEYS[1], RESET, 'PX', RESET_MS)
  return 1
end

-- inspect: returns {record or '', pttl}; a compact key as the full record it stands for.
if op == 'inspect' then
  local v = redis.call('GET', KEYS[1])
  local ttl = redis.call('PTTL', KEYS[1])
  if v == RESET then
    v = ''
  elseif v and compact_ref(v) then
    local r = load(KEYS[1])
    if not r then
      v = ''
    elseif r.s == 'D' then
      -- Done with its batch until the batch's time; done on its own place as long as the key lives.
      v, ttl = 'D', r.until_ms and math.min(ttl, r.until_ms - now_ms()) or ttl
    elseif r.s ~= '?' then
      v = encode(r)
    end
  end
  return {v or '', d(ttl)}
end

return redis.error_reply('unknown operation ' .. tostring(op))
