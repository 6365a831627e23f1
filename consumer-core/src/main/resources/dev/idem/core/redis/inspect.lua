-- Reads a record for inspection. KEYS[1] record.
-- Returns {type, pttl, field, value, ...}.
local kind = redis.call('TYPE', KEYS[1]).ok
local out = {kind, string.format('%d', redis.call('PTTL', KEYS[1]))}
if kind == 'hash' then
  for _, v in ipairs(redis.call('HGETALL', KEYS[1])) do out[#out + 1] = v end
end
return out
