-- Extends leases held by one owner. KEYS: records. ARGV: owner, lease ms.
-- Returns per key 1 (renewed) or 0 (lost: no longer this owner's).
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local out = {}
for i, key in ipairs(KEYS) do
  if redis.call('TYPE', key).ok == 'hash' then
    local r = redis.call('HMGET', key, 's', 'o')
    if r[1] == 'C' and r[2] == ARGV[1] then
      redis.call('HSET', key, 'l', string.format('%d', now + tonumber(ARGV[2])))
      out[i] = 1
    else
      out[i] = 0
    end
  else
    out[i] = 0
  end
end
return out
