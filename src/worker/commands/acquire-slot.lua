-- A fleet-wide slot of one engine (KEYS[1], a sorted set of research job ids scored by when
-- the slot lapses): ARGV[1] takes one if it holds one already or fewer than ARGV[2] are
-- taken. A job keeps its slot until it ends, across worker crashes (its remote run goes on
-- meanwhile): score +inf. A job no longer followed but maybe still running at the provider
-- (indeterminate, deferred) keeps it until its run could last no longer (a finite score);
-- ARGV[3] = now (ms) drops the lapsed ones first. A run that holds its slot already (a deferred
-- job resumed) holds it again until it ends: +inf.
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[3])
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  redis.call('ZADD', KEYS[1], 'XX', '+inf', ARGV[1])
  return 1
end
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[2]) then
  redis.call('ZADD', KEYS[1], '+inf', ARGV[1])
  return 1
end
return 0
