-- Records a failure and releases the claim for the redelivery.
-- KEYS[1] record. ARGV: owner, error, attempts-window ms.
-- Returns 'attempts:failures:first failure ms', or '' if not the owner.
local key = KEYS[1]
local r = redis.call('HMGET', key, 's', 'o', 't', 'ff')
if r[1] ~= 'C' or r[2] ~= ARGV[1] then return '' end
local t = redis.call('TIME')
local now = string.format('%d', tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))
local a = (r[3] == '1') and redis.call('HINCRBY', key, 'a', 1) or tonumber(redis.call('HGET', key, 'a'))
local n = redis.call('HINCRBY', key, 'n', 1)
local ff = r[4] or now
redis.call('HSET', key, 's', 'F', 't', '0', 'e', ARGV[2], 'ff', ff)
redis.call('HDEL', key, 'o')
redis.call('PEXPIRE', key, ARGV[3])
return string.format('%d', a) .. ':' .. string.format('%d', n) .. ':' .. ff
