/**
 * What the entities share in how they decide:
 * a command's {@link io.otl.core.entity.Plan} of events. Nothing here knows an entity's own types.
 */
package io.otl.core.entity;
