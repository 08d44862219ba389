"""The Lua scripts of `RedisTaskStore`: each step that reads and writes a task is one atomic
script, so two instances never both decide a task's end.

Layout (`P` is the `RedisConfig` prefix):

    P task:<id>        hash   s status, d DetailedTask (JSON), o owner (JSON), i instance running
                              it, x "1" once a cancel was asked; expires with the task's TTL
    P task-inbox:<id>  list   answers for the task's questions (JSON), for its instance to take
    P task-leases      zset   running task ids, scored by lease expiry (ms, Redis clock)

Times come from Redis (`TIME`), never from an instance's clock: one clock decides whether a
lease lapsed. Scripts touch keys named from their arguments, so they need one Redis (or a
primary with replicas), not Redis Cluster.
"""

from __future__ import annotations

_NOW = """
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local function ended(s) return s == 'completed' or s == 'failed' or s == 'cancelled' end
"""

#: Write the running instance's snapshot and renew its lease (0: the task already ended
#: elsewhere, which no snapshot may undo). KEYS: task, leases. ARGV: id, status, detailed,
#: owner, expire-at ms (0: never), lease ms, terminal (1/0), instance.
SAVE = (
    _NOW
    + """
if ended(redis.call('HGET', KEYS[1], 's')) then return 0 end
redis.call('HSET', KEYS[1], 's', ARGV[2], 'd', ARGV[3], 'o', ARGV[4], 'i', ARGV[8])
if ARGV[5] ~= '0' then redis.call('PEXPIREAT', KEYS[1], ARGV[5]) end
if ARGV[7] == '1' then
  redis.call('ZREM', KEYS[2], ARGV[1])
else
  redis.call('ZADD', KEYS[2], string.format('%.0f', now + tonumber(ARGV[6])), ARGV[1])
end
return 1
"""
)

#: Renew a lease; say whether a cancel was asked and show the answers waiting (they stay until
#: the instance has them: ACK). KEYS: task, leases, inbox. ARGV: id, lease ms. Returns {-1}
#: (the record is gone: write it again), {0} (it ended elsewhere) or {1, cancel flag, answers}.
RENEW = (
    _NOW
    + """
local s = redis.call('HGET', KEYS[1], 's')
if not s then return {-1} end
if ended(s) then return {0} end
redis.call('ZADD', KEYS[2], string.format('%.0f', now + tonumber(ARGV[2])), ARGV[1])
return {1, redis.call('HGET', KEYS[1], 'x') or '', redis.call('LRANGE', KEYS[3], 0, -1)}
"""
)

#: A task as stored, and whether its lease is live. KEYS: task, leases. ARGV: id.
#: Returns nil or {status, detailed, owner, live (1/0)}.
LOOK = (
    _NOW
    + """
local h = redis.call('HMGET', KEYS[1], 's', 'd', 'o')
if not h[1] then return false end
local lease = redis.call('ZSCORE', KEYS[2], ARGV[1])
local live = 0
if ended(h[1]) or (lease and tonumber(lease) >= now) then live = 1 end
return {h[1], h[2], h[3], live}
"""
)

#: Fail a task whose lease lapsed, unless it ended or was renewed meanwhile (then 0).
#: KEYS: task, leases. ARGV: id, the failed DetailedTask.
FAIL = (
    _NOW
    + """
local s = redis.call('HGET', KEYS[1], 's')
if not s or ended(s) then return 0 end
local lease = redis.call('ZSCORE', KEYS[2], ARGV[1])
if lease and tonumber(lease) >= now then return 0 end
redis.call('HSET', KEYS[1], 's', 'failed', 'd', ARGV[2])
redis.call('ZREM', KEYS[2], ARGV[1])
return 1
"""
)

#: Ask a running task to stop (its instance hears it through the bus, or at its next renewal).
#: KEYS: task. Returns -1 (unknown), 0 (already ended) or 1.
CANCEL = (
    _NOW
    + """
local s = redis.call('HGET', KEYS[1], 's')
if not s then return -1 end
if ended(s) then return 0 end
redis.call('HSET', KEYS[1], 'x', '1')
return 1
"""
)

#: Leave answers for a running task; they live as long as the task. (Still `working` here,
#: it may have asked already: its instance writes what it asked a moment after asking.)
#: KEYS: task, inbox. ARGV: answers (JSON). Returns 1, or 0 when the task is unknown or ended.
PUSH = """
local s = redis.call('HGET', KEYS[1], 's')
if not s or s == 'completed' or s == 'failed' or s == 'cancelled' then return 0 end
redis.call('RPUSH', KEYS[2], ARGV[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl > 0 then redis.call('PEXPIRE', KEYS[2], ttl) end
return 1
"""

#: The answers waiting for a task, left in place. KEYS: inbox.
TAKE = """
return redis.call('LRANGE', KEYS[1], 0, -1)
"""

#: Remove answers the instance has applied (ARGV: each as taken). A reply lost to a Redis
#: restart loses nothing: what is still there is taken again, and an answer whose question
#: was answered already is ignored. KEYS: inbox.
ACK = """
for _, item in ipairs(ARGV) do redis.call('LREM', KEYS[1], 1, item) end
return #ARGV
"""

#: Running tasks whose lease lapsed (at most ARGV[2]); entries of tasks that ended or expired
#: are dropped on the way. KEYS: leases. ARGV: the task key prefix, limit.
SWEEP = (
    _NOW
    + """
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', string.format('%.0f', now),
                       'LIMIT', 0, tonumber(ARGV[2]))
local out = {}
for _, id in ipairs(ids) do
  if ended(redis.call('HGET', ARGV[1] .. id, 's')) or
     redis.call('EXISTS', ARGV[1] .. id) == 0 then
    redis.call('ZREM', KEYS[1], id)
  else
    table.insert(out, id)
  end
end
return out
"""
)
