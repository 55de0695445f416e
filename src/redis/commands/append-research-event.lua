-- Appends a batch of research events to a job's stream (KEYS[1]) as one entry: field 'b',
-- a JSON array, under id 0-(last seq + 1) (a single event: field 'e', the event), so the
-- stream's last id always tells how far it goes. Seqs at or below the last stored one are
-- skipped. In the same step it stores the writer's resume point (ARGV[2], a ref: '' = none)
-- in the job's state hash (KEYS[2]), so a worker that takes over resumes after exactly the
-- events stored. ARGV[1] = lifetime in ms; ARGV[3] = the events' seqs, comma-separated, in
-- order; ARGV[4] = their JSON texts joined by newlines (JSON text never holds a raw
-- newline). Returns how many events were new; with none new, the ref is not written.
local top = -1
local newest = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)[1]
if newest then
  top = tonumber(string.match(newest[1], '%-(%d+)$')) - 1
end
local blob = ARGV[4]
local texts = {}
local last = top
local from = 1
for seq in string.gmatch(ARGV[3], '[^,]+') do
  local stop = string.find(blob, '\n', from, true) or (#blob + 1)
  local n = tonumber(seq)
  if n > last then
    texts[#texts + 1] = string.sub(blob, from, stop - 1)
    last = n
  end
  from = stop + 1
end
if #texts == 0 then
  return 0
end
local id = '0-' .. (last + 1)
if #texts == 1 then
  redis.call('XADD', KEYS[1], id, 'e', texts[1])
else
  redis.call('XADD', KEYS[1], id, 'b', '[' .. table.concat(texts, ',') .. ']')
end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
if ARGV[2] ~= '' then
  redis.call('HSET', KEYS[2], 'ref', ARGV[2])
  redis.call('PEXPIRE', KEYS[2], ARGV[1])
end
return #texts
