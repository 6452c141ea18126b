package io.otl.core;

/**
 * Marker for what reaches the journal: every event and every snapshot (state) of an event-sourced
 * entity. The journal names each such type by a logical, versioned name from one registry
 * ({@code io.otl.persistence.schema.PersistedTypes}), never by its Java class name, so classes can
 * move, split and be renamed without making stored events unreadable (docs/schema-evolution.md).
 * A class implementing it must be listed there; a test fails otherwise.
 */
public interface Persisted extends JsonSerializable {}
