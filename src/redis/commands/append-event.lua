-- Appends one event to a job's stream (KEYS[1]) under stream id 0-(index+1), once: an
-- existing index is a no-op. KEYS[2] = token counter, KEYS[3] = the job's record (its
-- remaining lifetime is copied onto the stream). ARGV[1] = fence ('' = unfenced),
-- ARGV[2] = index, ARGV[3] = JSON of the event.
if ARGV[1] ~= '' and redis.call('GET', KEYS[2]) ~= ARGV[1] then
  return redis.error_reply('LEASE_LOST')
end
local id = '0-' .. (tonumber(ARGV[2]) + 1)
if #redis.call('XRANGE', KEYS[1], id, id) > 0 then
  return 0
end
local ok = redis.pcall('XADD', KEYS[1], id, 'e', ARGV[3])
if type(ok) == 'table' and ok.err then
  -- An id at or below the last one: written before (or out of order, never acknowledged).
  return 0
end
local ttl = redis.call('PTTL', KEYS[3])
if ttl > 0 then
  redis.call('PEXPIRE', KEYS[1], ttl)
end
return 1
