-- Takes a job's lease (KEYS[1], a hash) for ARGV[1] for ARGV[2] ms unless another holder's
-- lease is live; the new token is the job's counter (KEYS[2]) plus one. Expiry is by the
-- Redis server's clock. Returns {token, expiresAt} or nil.
local now = redis.call('TIME')
local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local holder = redis.call('HGET', KEYS[1], 'holder')
local expires = tonumber(redis.call('HGET', KEYS[1], 'expiresAt') or '0')
if holder and holder ~= ARGV[1] and expires > nowMs then
  return nil
end
local token = redis.call('INCR', KEYS[2])
local expiresAt = nowMs + tonumber(ARGV[2])
redis.call('HSET', KEYS[1], 'holder', ARGV[1], 'token', token, 'expiresAt', expiresAt)
local ttl = redis.call('PTTL', KEYS[3])
if ttl > 0 then
  redis.call('PEXPIRE', KEYS[1], ttl)
  redis.call('PEXPIRE', KEYS[2], ttl)
end
return {token, tostring(expiresAt)}
