/**
 * Dataset export (design §6): {@link io.otl.persistence.export.DatasetExport} streams JSON Lines
 * (SFT, DPO, RL) from the journal in constant memory, with a manifest (ids, count, SHA-256, PII
 * findings). The formats are documented on {@link io.otl.persistence.export.JsonlFormats} and
 * {@link io.otl.persistence.export.DatasetExport}.
 */
package io.otl.persistence.export;
