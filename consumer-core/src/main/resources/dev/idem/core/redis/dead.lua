-- Marks a key dead-lettered for the dedup window, compensation pending.
-- KEYS[1] record. ARGV: owner, error ('' when none), dead-window ms. Returns 1, or 0 if not the owner.
local key = KEYS[1]
local r = redis.call('HMGET', key, 's', 'o', 't')
if r[1] ~= 'C' or r[2] ~= ARGV[1] then return 0 end
if r[3] == '1' then redis.call('HINCRBY', key, 'a', 1) end
if ARGV[2] ~= '' then
  redis.call('HINCRBY', key, 'n', 1)
  redis.call('HSET', key, 'e', ARGV[2])
end
redis.call('HSET', key, 's', 'X', 't', '0', 'cs', 'pending')
redis.call('HDEL', key, 'o')
redis.call('PEXPIRE', key, ARGV[3])
return 1
