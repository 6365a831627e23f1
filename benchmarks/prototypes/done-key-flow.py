# A steady flow of done keys on a local Redis (database 9, flushed): strings against hash buckets
# with an expiry in the value and a sweep every k-th field created; prints used_memory per live key
# at steady state and Redis CPU per key (decision 0062). No dependencies beyond Python 3.
#   python3 done-key-flow.py strings <keys/s> <window s> <run s> 1 1
#   python3 done-key-flow.py buckets <keys/s> <window s> <run s> <buckets> <k>
#   python3 done-key-flow.py fields <keys/s> <window s> <run s> <buckets> 1   (Redis 7.4+: HPEXPIRE)
# The server is 127.0.0.1:6379 unless REDIS_PORT says otherwise.
import os, socket, sys, time
def cmd(s, *args):
    out = b'*%d\r\n' % len(args)
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out += b'$%d\r\n%s\r\n' % (len(a), a)
    s.sendall(out)
    return read(s)
buf = b''
def line(s):
    global buf
    while b'\r\n' not in buf:
        buf += s.recv(65536)
    l, buf = buf.split(b'\r\n', 1)
    return l
def read(s):
    global buf
    l = line(s)
    t, rest = l[:1], l[1:]
    if t in (b'+', b':'): return rest
    if t == b'-': raise Exception(rest)
    if t == b'$':
        n = int(rest)
        if n < 0: return None
        while len(buf) < n + 2: buf += s.recv(65536)
        v, buf = buf[:n], buf[n + 2:]
        return v
    if t == b'*':
        return [read(s) for _ in range(int(rest))]
LUA = r'''
local mode, start, count, window, buckets, k = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local B62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
local function b62(x, n)
  local out = {}
  for i = n, 1, -1 do local r = x % 62; out[i] = string.sub(B62, r + 1, r + 1); x = math.floor(x / 62) end
  return table.concat(out)
end
local function unb62(s)
  local x = 0
  for i = 1, #s do x = x * 62 + string.find(B62, string.sub(s, i, i), 1, true) - 1 end
  return x
end
local function bucket_of(rest)
  return 'idem:inventory:%h:' .. (tonumber(string.sub(redis.sha1hex(rest), 1, 7), 16) % buckets)
end
local id = b62(start, 9)
redis.call('SET', 'idem:batch:' .. id, 'D|' .. (now + window), 'PX', window + 60000)
local until_s = b62(math.floor((now + window) / 1000) + 1, 6)
local nowsec = b62(math.floor(now / 1000), 6)
for i = 0, count - 1 do
  local n = start + i
  local rest = string.format('orders:order-%08d:deduct', n)
  local value = 'b' .. id .. b62(i % 500, 2)
  if mode == 'strings' then
    redis.call('SET', 'idem:inventory:' .. rest, value, 'PX', window)
  elseif mode == 'fields' then
    local bucket = bucket_of(rest)
    if not redis.call('HGET', bucket, rest) then
      redis.call('HSET', bucket, rest, value)
      redis.call('HPEXPIRE', bucket, window, 'FIELDS', 1, rest)
    end
  else
    local bucket = bucket_of(rest)
    if not redis.call('HGET', bucket, rest) then
      redis.call('HSET', bucket, rest, value .. until_s)
      if redis.call('PTTL', bucket) < window then redis.call('PEXPIRE', bucket, window + 2000) end
      if n % k == 0 then
        local all = redis.call('HGETALL', bucket)
        local dead = {}
        for j = 1, #all, 2 do
          local v = all[j + 1]
          if string.sub(v, -6) <= nowsec then dead[#dead + 1] = all[j] end
        end
        if #dead > 0 then redis.call('HDEL', bucket, unpack(dead)) end
      end
    end
  end
end
return 1
'''
def info(s, section):
    text = cmd(s, 'INFO', section).decode()
    return dict(l.split(':', 1) for l in text.split('\r\n') if ':' in l)
mode, rate, window_s, seconds, buckets, k = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
s = socket.create_connection(('127.0.0.1', int(os.environ.get('REDIS_PORT', '6379'))))
cmd(s, 'SELECT', 9); cmd(s, 'FLUSHDB')
sha = cmd(s, 'SCRIPT', 'LOAD', LUA)
base = int(info(s, 'memory')['used_memory'])
per_call = rate // 10
n = 0; begin = time.time(); cpu_mark = None
while time.time() - begin < seconds:
    tick = time.time()
    cmd(s, 'EVALSHA', sha, 0, mode, n, per_call, window_s * 1000, buckets, k)
    n += per_call
    if cpu_mark is None and time.time() - begin >= seconds - window_s:
        c = info(s, 'cpu'); cpu_mark = (float(c['used_cpu_user']) + float(c['used_cpu_sys']), n, time.time())
    time.sleep(max(0, 0.1 - (time.time() - tick)))
c = info(s, 'cpu'); cpu_end = float(c['used_cpu_user']) + float(c['used_cpu_sys'])
used = int(info(s, 'memory')['used_memory']) - base
live = n - cpu_mark[1]  # written in the last window (ends a little over it)
keys = int(cmd(s, 'DBSIZE'))
print(f'{mode} k={k} buckets={buckets}: written {n}, live ~{live}, keys {keys}, used_memory/live key {used/live:.1f} B, '
      f'Redis CPU/key {1e6*(cpu_end-cpu_mark[0])/(n-cpu_mark[1]):.2f} us, elapsed {time.time()-begin:.0f}s')
cmd(s, 'FLUSHDB')
