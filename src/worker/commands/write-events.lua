-- A worker's write of a batch of a job's events: appendBatch (composed in front of this
-- script) to the stream (KEYS[1]), and in the same step the job's ref after the batch's last
-- event in its state hash (KEYS[2]), so a worker that takes over resumes after exactly the
-- events stored. With KEYS[3] (the batch holds `created`), the provider's job id is bound to
-- the research job (value ARGV[7], lifetime ARGV[8] ms), so the provider's webhook can wake
-- it. ARGV[1] = the stream's lifetime in ms; ARGV[2] = the ref ('' = none); ARGV[3..6] =
-- first seq, last seq, count, encoded batch. Returns appendBatch's answer; nothing else is
-- written unless the batch was (`{-1, top}`: the caller sends again what is past `top`). A
-- third element says whether a cancellation of the job is stored (1) or not (0), so a
-- worker whose job writes events need not poll for one.
-- A job already ended (by another run, which took it over when this one's lock lapsed) takes
-- no more events: the answer is -2. One thing is kept: an `indeterminate` job (its submission's
-- answer never reached a stored ref) gains the ref of the run that got that answer after all,
-- so that attaching it follows the provider's job.
local status = redis.call('HGET', KEYS[2], 'status')
if FINAL[status] then
  if status == 'indeterminate' and ARGV[2] ~= '' and redis.call('HEXISTS', KEYS[2], 'ref') == 0 then
    redis.call('HSET', KEYS[2], 'ref', ARGV[2])
  end
  return {-2, 0, 0}
end
local added = appendBatch(KEYS[1], ARGV[1], tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6])
if added[1] > 0 then
  if ARGV[2] ~= '' then
    redis.call('HSET', KEYS[2], 'ref', ARGV[2])
    redis.call('PEXPIRE', KEYS[2], ARGV[1])
  end
  if KEYS[3] then
    redis.call('SET', KEYS[3], ARGV[7], 'PX', ARGV[8])
  end
end
return {added[1], added[2], redis.call('HEXISTS', KEYS[2], 'cancelRequestedAt')}
