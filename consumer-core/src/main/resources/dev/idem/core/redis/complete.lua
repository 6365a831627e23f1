-- Marks keys done for the dedup window, replacing the hash with the string 'D'.
-- KEYS: records. ARGV: owner, done-window ms. Returns per key 1 (done) or 0 (refused: not the owner).
local out = {}
for i, key in ipairs(KEYS) do
  local kind = redis.call('TYPE', key).ok
  if kind == 'string' then
    out[i] = 1
  elseif kind == 'hash' and redis.call('HGET', key, 's') == 'C' and redis.call('HGET', key, 'o') == ARGV[1] then
    redis.call('SET', key, 'D', 'PX', ARGV[2])
    out[i] = 1
  else
    out[i] = 0
  end
end
return out
