-- Firms a tentative claim right before its handler runs: counts the attempt now, so a crash in
-- the handler is counted. KEYS[1] record. ARGV: owner. Returns 1, or 0 if not the owner.
local r = redis.call('HMGET', KEYS[1], 's', 'o', 't')
if r[1] ~= 'C' or r[2] ~= ARGV[1] then return 0 end
if r[3] == '1' then
  redis.call('HINCRBY', KEYS[1], 'a', 1)
  redis.call('HSET', KEYS[1], 't', '0')
end
return 1
