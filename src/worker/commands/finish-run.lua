-- The end of a research job (or of a run that ends it), in one atomic step, so whoever sees
-- `done` in the stream or the job's end can read its result at once:
--   1. the events still unwritten and the job's `done` event (ARGV[3..6]: first seq, last seq,
--      count, encoded batch, as appendBatch, composed in front, takes them; count 0: none),
--      with the ref after them (ARGV[2], '' = none) in the state hash (KEYS[2]);
--   2. the result (ARGV[9], '' = none) in KEYS[3] for ARGV[10] ms;
--   3. the status (ARGV[7]) and error (ARGV[8], '' = none) in the state hash, which then
--      lives ARGV[10] ms;
--   4. with KEYS[5], the engine's fleet slot (a sorted set) given back (member ARGV[12]);
--   5. an entry in the job's `ended` stream (KEYS[4], one entry, kept ARGV[11] ms) that
--      wakes whoever waits for the end, carrying what such a waiter returns: fields 'v' '1',
--      'result' and the result, then the state: the fields ARGV[13..] names, of those the
--      state hash has, and their values.
-- ARGV[1] = the event stream's lifetime in ms. If the batch straddles the stored end
-- (appendBatch's {-1, top}) nothing at all is written and that answer is returned: the
-- caller sends again what is past `top`. Otherwise returns appendBatch's answer.
-- A job already ended (by another run, which took it over when this one's lock lapsed) takes
-- no more writes: nothing is written, and the answer is -2.
if FINAL[redis.call('HGET', KEYS[2], 'status')] then
  return {-2, 0}
end
local added = appendBatch(KEYS[1], ARGV[1], tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6])
if added[1] < 0 then
  return added
end
if added[1] > 0 and ARGV[2] ~= '' then
  redis.call('HSET', KEYS[2], 'ref', ARGV[2])
end
if ARGV[9] ~= '' then
  redis.call('SET', KEYS[3], ARGV[9], 'PX', ARGV[10])
end
redis.call('HSET', KEYS[2], 'status', ARGV[7])
if ARGV[8] ~= '' then
  redis.call('HSET', KEYS[2], 'error', ARGV[8])
end
redis.call('PEXPIRE', KEYS[2], ARGV[10])
if KEYS[5] then
  redis.call('ZREM', KEYS[5], ARGV[12])
end
local entry = {'v', '1', 'result', ARGV[9]}
local values = redis.call('HMGET', KEYS[2], unpack(ARGV, 13))
for i = 13, #ARGV do
  if values[i - 12] then
    entry[#entry + 1] = ARGV[i]
    entry[#entry + 1] = values[i - 12]
  end
end
redis.call('XADD', KEYS[4], 'MAXLEN', '1', '*', unpack(entry))
redis.call('PEXPIRE', KEYS[4], ARGV[11])
return added
