-- What a waiter for a job's end reads before it blocks, in one step: the job's state (the
-- fields ARGV names, of the hash KEYS[1], as field, value, … for those present), then for a
-- job that ended (or was deferred) its result (KEYS[2], or false), and for any other the id
-- of the last entry of its `ended` stream (KEYS[3], or false), after which the waiter blocks.
-- FINAL (the final statuses) is defined in front of it (state.ts, withFinalStatuses).
local values = redis.call('HMGET', KEYS[1], unpack(ARGV))
local state = {}
local status
for i = 1, #ARGV do
  if values[i] then
    state[#state + 1] = ARGV[i]
    state[#state + 1] = values[i]
    if ARGV[i] == 'status' then
      status = values[i]
    end
  end
end
if FINAL[status] or status == 'deferred' then
  return {state, redis.call('GET', KEYS[2]), false}
end
local last = redis.call('XREVRANGE', KEYS[3], '+', '-', 'COUNT', 1)[1]
return {state, false, last and last[1] or false}
