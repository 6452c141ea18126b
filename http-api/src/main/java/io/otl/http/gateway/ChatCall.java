package io.otl.http.gateway;

import java.time.Instant;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.pekko.Done;

/**
 * One call's context, fixed before the upstream is called; {@code failedUpstreamNanos}: time spent
 * on an upstream attempt that failed before the fallback (the model server's, not the gateway's);
 * {@code receivedAt}: the request's arrival, the time of the messages it brings; {@code clientGone}:
 * completes when the agent's connection ends; {@code knownComplete}: {@code known} is all the session
 * held when the call was forwarded (a new session: nothing), not only what this gateway remembers;
 * {@code routedServedModel}: the model name of the routed version ({@code routedVersion}), which the
 * session's start records as its {@code servedModel} even when the stable answered after a fallback.
 */
record ChatCall(String agent, String sessionId, ChatRequest request, Set<String> known, boolean knownComplete,
    String routedVersion, String routedServedModel, long startNanos, Instant receivedAt, boolean recorded, AtomicLong failedUpstreamNanos,
    CompletionStage<Done> clientGone) {}
