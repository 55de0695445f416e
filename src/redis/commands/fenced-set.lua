-- Writes a job's record (KEYS[1]) if the writer still holds the lease.
-- KEYS[2] = the job's token counter; ARGV[1] = fence token ('' = unfenced), ARGV[2] = JSON,
-- ARGV[3] = expiry (epoch ms) of every key of the job, KEYS[3..] = the job's other keys.
if ARGV[1] ~= '' and redis.call('GET', KEYS[2]) ~= ARGV[1] then
  return redis.error_reply('LEASE_LOST')
end
redis.call('SET', KEYS[1], ARGV[2])
for i = 1, #KEYS do
  redis.call('PEXPIREAT', KEYS[i], ARGV[3])
end
return 1
