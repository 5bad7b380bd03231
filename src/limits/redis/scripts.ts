/**
 * The Lua scripts of RedisLimiter. Redis runs a script to completion before any other command, so each
 * is one atomic check-and-record across every key it names, from every node at once.
 *
 * Sliding windows are sorted sets of admission instants (score = ms, member unique per request): exact
 * over any span of windowMs. Fixed windows are hashes {count, until}. Slots are sorted sets of slot id
 * -> lease expiry. Instants come from the caller (`now`), as in the port; TTLs only collect garbage and
 * are set with a margin so they never end a window early.
 */

/** How long a key outlives the last instant it can matter at (garbage collection only). */
export const GC_MARGIN_MS = 60_000;

const slidingState = `
local function sliding(key, limit, windowMs, now)
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - windowMs)
  local count = redis.call('ZCARD', key)
  if count < limit then return count, true, 0 end
  local edge = redis.call('ZRANGE', key, count - limit, count - limit, 'WITHSCORES')
  return count, false, tonumber(edge[2]) + windowMs - now
end
local function oldest(key)
  local first = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
  return tonumber(first[2])
end
local function extend(key, ttl)
  if redis.call('PTTL', key) < ttl then redis.call('PEXPIRE', key, ttl) end
end
`;

/**
 * KEYS: the n window keys, then the slot key if there is one.
 * ARGV: now, n, hasSlot, member, then per window (limit, windowMs, fixedUntil or -1), then (max, leaseMs,
 * slotId) if hasSlot.
 * Returns {allowed, refusedIndex (0 = the slot), retryAfterMs, then remaining and resetMs per window}.
 */
export const admitScript = `${slidingState}
local now = tonumber(ARGV[1])
local n = tonumber(ARGV[2])
local hasSlot = tonumber(ARGV[3]) == 1
local member = ARGV[4]
local margin = ${GC_MARGIN_MS}
local limits, windows, fixed, remaining, reset = {}, {}, {}, {}, {}
local refused, retry = -1, 0
for i = 1, n do
  local base = 4 + (i - 1) * 3
  local limit, windowMs, fixedUntil = tonumber(ARGV[base + 1]), tonumber(ARGV[base + 2]), tonumber(ARGV[base + 3])
  limits[i], windows[i], fixed[i] = limit, windowMs, fixedUntil
  local room
  if fixedUntil >= 0 then
    local stored = redis.call('HMGET', KEYS[i], 'count', 'until')
    local count = 0
    if stored[2] and tonumber(stored[2]) > now then count = tonumber(stored[1]) end
    room = count < limit
    remaining[i] = math.max(0, limit - count)
    reset[i] = fixedUntil - now
  else
    local count, hasRoom, resetMs = sliding(KEYS[i], limit, windowMs, now)
    room = hasRoom
    remaining[i] = math.max(0, limit - count)
    reset[i] = resetMs
  end
  -- Of the full windows, the one that frees up last gives the code and the wait.
  if not room and (refused < 0 or reset[i] > retry) then
    refused = i
    retry = math.max(1, reset[i])
  end
end
local slotId = ''
if refused < 0 and hasSlot then
  local base = 4 + n * 3
  local slotKey = KEYS[n + 1]
  local max, leaseMs = tonumber(ARGV[base + 1]), tonumber(ARGV[base + 2])
  redis.call('ZREMRANGEBYSCORE', slotKey, '-inf', now)
  if redis.call('ZCARD', slotKey) >= max then
    refused = 0
    retry = 1000
  else
    slotId = ARGV[base + 3]
    redis.call('ZADD', slotKey, now + leaseMs, slotId)
    extend(slotKey, leaseMs + margin)
  end
end
local out = {}
if refused >= 0 then
  out[1], out[2], out[3] = 0, refused, retry
else
  out[1], out[2], out[3] = 1, -1, 0
  for i = 1, n do
    remaining[i] = remaining[i] - 1
    if fixed[i] >= 0 then
      local stored = redis.call('HMGET', KEYS[i], 'count', 'until')
      if stored[2] and tonumber(stored[2]) > now then
        redis.call('HINCRBY', KEYS[i], 'count', 1)
      else
        redis.call('HSET', KEYS[i], 'count', 1, 'until', fixed[i])
      end
      extend(KEYS[i], math.max(1, fixed[i] - now) + margin)
      reset[i] = fixed[i] - now
    else
      redis.call('ZADD', KEYS[i], now, member)
      extend(KEYS[i], windows[i] + margin)
      reset[i] = oldest(KEYS[i]) + windows[i] - now
    end
  end
end
out[4] = slotId
for i = 1, n do
  out[3 + i * 2] = remaining[i]
  out[4 + i * 2] = reset[i]
end
return out
`;

/**
 * KEYS: the window key. ARGV: limit, windowMs, now, record (1 = hit, 0 = peek), member.
 * Returns {allowed, remaining, retryAfterMs, resetMs}.
 */
export const hitScript = `${slidingState}
local limit, windowMs, now = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local record = tonumber(ARGV[4]) == 1
local count, room, retry = sliding(KEYS[1], limit, windowMs, now)
if not room then
  local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
  return {0, 0, retry, tonumber(last[2]) + windowMs - now}
end
if not record then return {1, limit - count, 0, windowMs} end
redis.call('ZADD', KEYS[1], now, ARGV[5])
extend(KEYS[1], windowMs + ${GC_MARGIN_MS})
return {1, limit - count - 1, 0, oldest(KEYS[1]) + windowMs - now}
`;

/**
 * KEYS: the slot key. ARGV: slotId, now, leaseMs. Extends a lease that has not run out; returns 1, or 0
 * when the slot is gone or expired (it may already count as free elsewhere, so it is not taken back).
 */
export const renewScript = `${slidingState}
local expiry = redis.call('ZSCORE', KEYS[1], ARGV[1])
local now, leaseMs = tonumber(ARGV[2]), tonumber(ARGV[3])
if not expiry or tonumber(expiry) <= now then return 0 end
redis.call('ZADD', KEYS[1], now + leaseMs, ARGV[1])
extend(KEYS[1], leaseMs + ${GC_MARGIN_MS})
return 1
`;
