-- What a waiter for a job's end reads before it blocks, in one step: the job's state hash
-- (KEYS[1], as HGETALL gives it), then for a job that ended (or was deferred) its result
-- (KEYS[2], or false), and for any other the id of the last entry of its `ended` stream
-- (KEYS[3], or false), after which the waiter blocks.
local hash = redis.call('HGETALL', KEYS[1])
local status
for i = 1, #hash, 2 do
  if hash[i] == 'status' then
    status = hash[i + 1]
  end
end
if status == 'completed' or status == 'incomplete' or status == 'cancelled' or status == 'failed'
  or status == 'indeterminate' or status == 'deferred' then
  return {hash, redis.call('GET', KEYS[2]), false}
end
local last = redis.call('XREVRANGE', KEYS[3], '+', '-', 'COUNT', 1)[1]
return {hash, false, last and last[1] or false}
