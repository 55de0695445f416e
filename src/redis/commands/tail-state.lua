-- What a tail of a job's events reads before it blocks, in one step: the job's status and
-- error (the state hash KEYS[1], as sonde/worker stores them; false when absent), the id of the
-- last entry of the job's `ended` stream (KEYS[3], '0-0' when none: an end adds one, and a
-- tail blocks on it beside the events), and, when the status is one of ARGV[2..] (the final
-- ones, and `deferred`), the entries of the event stream (KEYS[2]) from id ARGV[1] on: the
-- events the tail has not delivered yet, every one of which was stored before the state took
-- that status (false otherwise).
local state = redis.call('HMGET', KEYS[1], 'status', 'error')
local ended = redis.call('XREVRANGE', KEYS[3], '+', '-', 'COUNT', 1)[1]
local entries = false
for i = 2, #ARGV do
  if state[1] == ARGV[i] then
    entries = redis.call('XRANGE', KEYS[2], ARGV[1], '+')
    break
  end
end
return {state[1], state[2], ended and ended[1] or '0-0', entries}
