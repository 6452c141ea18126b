package io.otl.core;

/**
 * Marker for every command, reply and view that may cross the network between nodes: bound to
 * Pekko's {@code jackson-json} serializer (this module's reference.conf; the persistence module's
 * serialization.conf). What reaches the journal implements the narrower {@link Persisted}, which
 * is stored under logical, versioned type names instead of class names (docs/schema-evolution.md).
 */
public interface JsonSerializable {}
