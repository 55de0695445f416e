-- A fleet-wide slot of one engine (KEYS[1], a sorted set of research job ids): ARGV[1] takes
-- one if it holds one already or fewer than ARGV[2] are taken. A job keeps its slot until
-- it ends, across worker crashes (its remote run goes on meanwhile). ARGV[3] = now (ms).
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  return 1
end
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[2]) then
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
  return 1
end
return 0
