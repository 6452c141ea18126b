package io.otl.core;

/**
 * Marker for every command, event, reply and snapshot that crosses the network or reaches the
 * journal. Bound to Pekko's {@code jackson-json} serializer in {@code serialization.conf}, so the
 * journal holds readable, versioned JSON (see {@code persistence/README} for migrations).
 */
public interface JsonSerializable {}
