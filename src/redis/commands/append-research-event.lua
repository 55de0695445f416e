-- Appends a batch of research events to a job's stream (KEYS[1]) with appendBatch (composed in
-- front of this script), and in the same step stores the writer's resume point (ARGV[2], a
-- ref: '' = none) in the job's state hash (KEYS[2]), so a worker that takes over resumes after
-- exactly the events stored. ARGV[1] = lifetime in ms; ARGV[3], ARGV[4] = the batch's first and
-- last seq; ARGV[5] = how many events; ARGV[6] = the encoded batch (appendBatch). Returns
-- appendBatch's answer; when nothing is new, the ref is not written.
local added = appendBatch(KEYS[1], ARGV[1], tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6])
if added[1] > 0 and ARGV[2] ~= '' then
  redis.call('HSET', KEYS[2], 'ref', ARGV[2])
  redis.call('PEXPIRE', KEYS[2], ARGV[1])
end
return added
