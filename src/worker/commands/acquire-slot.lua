-- A fleet-wide slot of one engine (KEYS[1], a sorted set of research job ids scored by when
-- the slot lapses): ARGV[1] takes one if it holds one already or fewer than ARGV[2] are
-- taken. A job keeps its slot until it ends, across worker crashes (its remote run goes on
-- meanwhile): score +inf. An indeterminate job's slot lapses when its run could last no
-- longer (a finite score); ARGV[3] = now (ms) drops the lapsed ones first.
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[3])
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  return 1
end
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[2]) then
  redis.call('ZADD', KEYS[1], '+inf', ARGV[1])
  return 1
end
return 0
