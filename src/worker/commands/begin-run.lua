-- The start of a worker's run of a research job, in one step: answers any wake asked for so
-- far (drops 'wakeRequestedAt'), and returns the job's state hash (KEYS[1], as HGETALL gives
-- it), the last entry of its event stream (KEYS[2], as XREVRANGE gives it) and whether this
-- run marked the submission as about to be sent. It marks it ('submittingAt' = ARGV[1],
-- status 'running'), as the run would before submitting, when ARGV[2] = '1' and the job was
-- never submitted: it is queued with its request, in no final state, with no ref, no earlier
-- mark and no stored cancellation, and its engine (the catalog id's part before ':') is not
-- in ARGV[3], the comma-framed list of engines with a fleet limit (those take their slot
-- first, and mark after). The hash returned is the one before the mark. FINAL (the final
-- statuses) is defined in front of it (state.ts, withFinalStatuses).
redis.call('HDEL', KEYS[1], 'wakeRequestedAt')
local hash = redis.call('HGETALL', KEYS[1])
local tail = redis.call('XREVRANGE', KEYS[2], '+', '-', 'COUNT', 1)
local marked = 0
if ARGV[2] == '1' then
  local field = {}
  for i = 1, #hash, 2 do
    field[hash[i]] = hash[i + 1]
  end
  local status = field['status']
  local final = FINAL[status] or status == 'deferred'
  local engine = string.match(field['model'] or '', '^([^:]+):')
  if status and not final and field['request'] and not field['ref'] and not field['submittingAt']
    and not field['cancelRequestedAt'] and engine
    and not string.find(ARGV[3], ',' .. engine .. ',', 1, true) then
    redis.call('HSET', KEYS[1], 'submittingAt', ARGV[1], 'status', 'running')
    marked = 1
  end
end
return {hash, tail, marked}
