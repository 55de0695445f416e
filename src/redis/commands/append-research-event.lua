-- Appends research events to a job's stream (KEYS[1]), each under id 0-(seq+1), once, and in
-- the same step stores the writer's resume point (ARGV[2], a ref: '' = none) in the job's
-- state hash (KEYS[2]), so a worker that takes over resumes after exactly the events stored.
-- ARGV[1] = lifetime in ms; then pairs ARGV[3], ARGV[4] = seq, JSON; … Returns how many
-- events were new (a seq stored before is skipped); with none new, the ref is not written.
local written = 0
for i = 3, #ARGV, 2 do
  local ok = redis.pcall('XADD', KEYS[1], '0-' .. (tonumber(ARGV[i]) + 1), 'e', ARGV[i + 1])
  if not (type(ok) == 'table' and ok.err) then
    written = written + 1
  end
end
if written == 0 then
  return 0
end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
if ARGV[2] ~= '' then
  redis.call('HSET', KEYS[2], 'ref', ARGV[2])
  redis.call('PEXPIRE', KEYS[2], ARGV[1])
end
return written
