-- Releases claims whose handler never started, counting nothing. KEYS: records. ARGV: owner.
-- Returns per key 1 (released) or 0 (not this owner's).
local out = {}
for i, key in ipairs(KEYS) do
  out[i] = 0
  if redis.call('TYPE', key).ok == 'hash' then
    local r = redis.call('HMGET', key, 's', 'o')
    if r[1] == 'C' and r[2] == ARGV[1] then
      redis.call('HSET', key, 's', 'F', 't', '0')
      redis.call('HDEL', key, 'o')
      out[i] = 1
    end
  end
end
return out
