-- A function, composed in front of the scripts that store research events (scripts.ts,
-- `withAppendBatch`): appends a batch of events with seqs first..last (contiguous, in order)
-- to a job's stream as one entry under id 0-(last + 1), so the stream's last id always
-- tells how far it goes: field 'e' holding the event's JSON when the batch has one event,
-- field 'b' holding the JSON array otherwise. The batch arrives encoded, so the script never
-- splits or copies it. Returns {new events, 0} when every seq is past the stored end (the
-- batch is stored), {0, 0} when all of them were stored before (nothing is written), and
-- {-1, top} when the batch straddles the stored end at seq `top` (nothing is written: the
-- caller sends again what is past `top`). Only that check reads the stream, and it reads an
-- entry only when one is at or past `first`: a batch past the end reads nothing.
local function appendBatch(stream, ttl, first, last, count, blob)
  if count == 0 then
    return {0, 0}
  end
  local clash = redis.call('XREVRANGE', stream, '+', '0-' .. (first + 1), 'COUNT', 1)[1]
  if clash then
    local top = tonumber(string.match(clash[1], '%-(%d+)$')) - 1
    if last <= top then
      return {0, 0}
    end
    return {-1, top}
  end
  redis.call('XADD', stream, '0-' .. (last + 1), count == 1 and 'e' or 'b', blob)
  redis.call('PEXPIRE', stream, ttl)
  return {count, 0}
end
