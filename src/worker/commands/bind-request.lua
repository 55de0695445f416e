-- Binds a queued job's state (KEYS[1], a hash) to its request (ARGV[1], canonical JSON) once,
-- in one round trip: 1 = a new job, 0 = the same request was queued under this key before,
-- -1 = the key queued another request (nothing is written), 2 = a new job, but BullMQ still
-- keeps the finished entry of an earlier job under this key (KEYS[2], its hash), whose state
-- expired: the caller replaces that entry, which BullMQ's add would take for this job.
-- ARGV[2] = model id, ARGV[3] = created at (ISO), ARGV[4] = the state's lifetime (ms),
-- ARGV[5] = created at (ms): after an earlier job, the new job's wake generations start
-- there, so that none of them is taken for one of the earlier job's kept wake entries.
local stored = redis.call('HGET', KEYS[1], 'request')
if stored and stored ~= ARGV[1] then
  return -1
end
redis.call('HSETNX', KEYS[1], 'request', ARGV[1])
redis.call('HSETNX', KEYS[1], 'status', 'queued')
redis.call('HSETNX', KEYS[1], 'model', ARGV[2])
redis.call('HSETNX', KEYS[1], 'createdAt', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
if stored then
  return 0
end
-- A new job under this key: the earlier job's event stream (KEYS[3]) and end entries (KEYS[4])
-- outlive its state (they have lifetimes of their own), and would be read as this job's.
redis.call('DEL', KEYS[3], KEYS[4])
if redis.call('EXISTS', KEYS[2]) == 1 then
  redis.call('HSET', KEYS[1], 'wakes', ARGV[5])
  return 2
end
return 1
