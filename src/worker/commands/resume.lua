-- `queue.resume(id)` in one step, on the job's state hash (KEYS[1]): a `deferred` job goes back
-- to `waiting` (it has a ref: the next run attaches) or `queued` (it has none), its failure
-- count reset, its backoff and error dropped, and takes the next wake generation, whose wake
-- the caller adds: returns {1, generation}. A job resumed before and not deferred again since
-- (its field 'resumedWake' set) returns {0, generation} while that wake has not run yet (its
-- status still the one the resume set, and no later wake taken: the caller adds it again, a
-- no-op if it is queued), else {0, 0}: nothing to do. Otherwise {-1} for a job that was never
-- queued (or expired), {-2, status} for one that is not deferred (ended, or never deferred).
-- ARGV[1] = now (ISO). FINAL (the final statuses) is defined in front of it (state.ts,
-- withFinalStatuses).
local status, ref, resumed, wakes = unpack(redis.call('HMGET', KEYS[1], 'status', 'ref', 'resumedWake', 'wakes'))
if not status then
  return {-1}
end
if status == 'deferred' then
  local generation = redis.call('HINCRBY', KEYS[1], 'wakes', 1)
  redis.call('HSET', KEYS[1], 'status', ref and 'waiting' or 'queued', 'failures', 0,
    'resumedAt', ARGV[1], 'resumedWake', generation)
  redis.call('HDEL', KEYS[1], 'backoffMs', 'error')
  return {1, generation}
end
if resumed and not FINAL[status] then
  if resumed == wakes and (status == 'waiting' or status == 'queued') then
    return {0, tonumber(resumed)}
  end
  return {0, 0}
end
return {-2, status}
