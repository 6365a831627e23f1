-- Claims keys for one owner (DESIGN §3). Record: a hash while CLAIMED (s=C), FAILED (s=F) or
-- DEAD (s=X); the plain string 'D' once DONE (small: it is kept for the whole dedup window).
-- Fields: o owner, l lease end (ms), f fence, a counted attempts, t 1 if the current claim's
-- attempt is not counted yet (tentative), n failures, ff first failure (ms), e last error,
-- cs compensation outcome.
-- KEYS: records. ARGV: owner, lease ms, firm (1/0), attempts-window ms, one attempt floor per key.
-- Returns per key: 'D' | 'X' | 'B:<ms left>' | 'C:<fence>:<attempt>:<failures>:<suspect>:<fresh>:<ff>'
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local now_us = tonumber(t[1]) * 1000000 + tonumber(t[2])
local owner, lease, firm, window = ARGV[1], tonumber(ARGV[2]), ARGV[3] == '1', ARGV[4]
local function d(x) return string.format('%d', x) end
local out = {}
for i, key in ipairs(KEYS) do
  local kind = redis.call('TYPE', key).ok
  if kind == 'string' then
    out[i] = 'D'
  else
    local r = redis.call('HMGET', key, 's', 'o', 'l', 'f', 'a', 'n', 't', 'ff')
    local s, o, l, f, a, n, tent, ff = r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8]
    if s == 'X' then
      out[i] = 'X'
    elseif s == 'C' and o == owner then
      -- Re-entrant: the same owner retrying after a timeout keeps its claim and fence.
      redis.call('HSET', key, 'l', d(now + lease))
      local attempt = tonumber(a) + (tent == '1' and 1 or 0)
      out[i] = 'C:' .. f .. ':' .. d(attempt) .. ':' .. n .. ':0:0:' .. (ff or '')
    elseif s == 'C' and tonumber(l) > now then
      out[i] = 'B:' .. d(tonumber(l) - now)
    else
      local fresh = (s == false or s == nil)
      -- A CLAIMED record with an expired lease was abandoned: its owner crashed or vanished.
      local suspect = (s == 'C')
      local attempts = fresh and math.max(0, tonumber(ARGV[4 + i]) - 1) or tonumber(a)
      local fence = fresh and now_us or math.max(tonumber(f) + 1, now_us)
      if firm then attempts = attempts + 1 end
      redis.call('HSET', key, 's', 'C', 'o', owner, 'l', d(now + lease), 'f', d(fence),
        'a', d(attempts), 't', firm and '0' or '1')
      if fresh then redis.call('HSET', key, 'n', '0') end
      redis.call('PEXPIRE', key, window)
      local attempt = firm and attempts or attempts + 1
      out[i] = 'C:' .. d(fence) .. ':' .. d(attempt) .. ':' .. (n or '0') .. ':' .. (suspect and '1' or '0')
        .. ':' .. (fresh and '1' or '0') .. ':' .. (ff or '')
    end
  end
end
return out
