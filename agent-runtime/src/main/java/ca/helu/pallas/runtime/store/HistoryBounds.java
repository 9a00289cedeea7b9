package ca.helu.pallas.runtime.store;

import java.time.Duration;

/**
 * How much an agent's histories hold (docs/runtime.md, "Conversations and concurrency").
 *
 * @param conversationChars the most one conversation holds; past it the oldest whole turns go
 * @param agentChars the most the agent's histories hold together in this process's memory; past it
 *     the least recently used sessions' histories go (a durable store keeps them: only what it
 *     caches counts)
 * @param sessionIdle how long a session's history stays in memory without a call (the memory store;
 *     a durable store keeps it for its own time to live)
 */
public record HistoryBounds(long conversationChars, long agentChars, Duration sessionIdle) {}
