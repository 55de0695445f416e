-- Writes (or replaces) a receipt in the job's receipt hash (KEYS[1]) if the writer holds
-- the lease. KEYS[2] = token counter, KEYS[3] = the job's record (lifetime copied).
-- ARGV[1] = fence ('' = unfenced), ARGV[2] = receipt key, ARGV[3] = JSON.
if ARGV[1] ~= '' and redis.call('GET', KEYS[2]) ~= ARGV[1] then
  return redis.error_reply('LEASE_LOST')
end
redis.call('HSET', KEYS[1], ARGV[2], ARGV[3])
local ttl = redis.call('PTTL', KEYS[3])
if ttl > 0 then
  redis.call('PEXPIRE', KEYS[1], ttl)
end
return 1
