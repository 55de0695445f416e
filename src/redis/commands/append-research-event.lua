-- Appends research events to a job's stream (KEYS[1]), each under id 0-(seq+1), once, and in
-- the same step stores the writer's resume point (ARGV[2], a ref: '' = none) in the job's
-- state hash (KEYS[2]), so a worker that takes over resumes after exactly the events stored.
-- ARGV[1] = lifetime in ms; ARGV[3] = the events' seqs, comma-separated; ARGV[4] = their
-- JSON texts joined by newlines (JSON text never holds a raw newline): two arguments for
-- the whole batch, however many events it has. Returns how many events were new (a seq
-- stored before is skipped); with none new, the ref is not written.
local written = 0
local blob = ARGV[4]
local from = 1
for seq in string.gmatch(ARGV[3], '[^,]+') do
  local stop = string.find(blob, '\n', from, true)
  local text = string.sub(blob, from, (stop or (#blob + 1)) - 1)
  from = (stop or #blob) + 1
  local ok = redis.pcall('XADD', KEYS[1], '0-' .. (tonumber(seq) + 1), 'e', text)
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
