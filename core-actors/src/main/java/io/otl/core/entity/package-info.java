/**
 * What the entities share in how they decide and act: a command's {@link io.otl.core.entity.Plan}
 * of events, and {@link io.otl.core.entity.PortCall} for calls to their ports. Nothing here knows
 * an entity's own types.
 */
package io.otl.core.entity;
