-- Records the compensation outcome on a dead-lettered key. KEYS[1] record. ARGV: outcome.
if redis.call('TYPE', KEYS[1]).ok == 'hash' and redis.call('HGET', KEYS[1], 's') == 'X' then
  redis.call('HSET', KEYS[1], 'cs', ARGV[1])
  return 1
end
return 0
