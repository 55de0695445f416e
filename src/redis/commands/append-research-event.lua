-- Appends a research event to a job's stream (KEYS[1]) under id 0-(seq+1), once, and in
-- the same step stores the writer's resume point (ARGV[4], a ref) in the job's state hash
-- (KEYS[2]), so a worker that takes over resumes after exactly the events stored.
-- ARGV[1] = seq, ARGV[2] = JSON, ARGV[3] = lifetime in ms. Returns 0 if seq was stored.
local id = '0-' .. (tonumber(ARGV[1]) + 1)
local ok = redis.pcall('XADD', KEYS[1], id, 'e', ARGV[2])
if type(ok) == 'table' and ok.err then
  return 0
end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
if ARGV[4] ~= '' then
  redis.call('HSET', KEYS[2], 'ref', ARGV[4])
  redis.call('PEXPIRE', KEYS[2], ARGV[3])
end
return 1
