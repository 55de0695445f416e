-- Extends the lease (KEYS[1]) held under token ARGV[1] by ARGV[2] ms; 0 if another holder
-- took the job (KEYS[2] = token counter). With ARGV[2] = 0 it releases the lease.
if redis.call('GET', KEYS[2]) ~= ARGV[1] or redis.call('HGET', KEYS[1], 'token') ~= ARGV[1] then
  return 0
end
local now = redis.call('TIME')
local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local ms = tonumber(ARGV[2])
redis.call('HSET', KEYS[1], 'expiresAt', ms > 0 and nowMs + ms or 0)
return 1
