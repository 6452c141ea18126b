package io.otl.persistence;

import java.util.ArrayList;
import java.util.List;
import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.persistence.Persistence;
import org.apache.pekko.persistence.journal.EventAdapters;
import org.apache.pekko.persistence.query.EventEnvelope;
import org.apache.pekko.persistence.query.Offset;
import org.apache.pekko.serialization.Serialization;
import org.apache.pekko.serialization.SerializationExtension;
import scala.Option;

/**
 * Turns a stored journal row into event envelopes exactly as pekko-persistence-jdbc 1.1.1's read
 * journal does ({@code PekkoSerialization.fromRow}, then {@code JdbcReadJournal.adaptEvents}): the
 * payload through Pekko's Serialization with the row's serializer id and manifest (so every
 * migration of io.otl.persistence.schema applies, and rows of earlier builds read the same), the
 * metadata likewise, then the write plugin's event adapters with the row's adapter manifest.
 */
final class JournalRowDecoder {
  private final Serialization serialization;
  private final EventAdapters adapters;

  JournalRowDecoder(ActorSystem system) {
    this.serialization = SerializationExtension.get(system);
    com.typesafe.config.Config readJournal = system.settings().config().getConfig("jdbc-read-journal");
    // The same adapters the read journal asks for: its write plugin's, resolved with its own config.
    this.adapters = Persistence.get(system).adaptersFor(readJournal.getString("write-plugin"), readJournal);
  }

  /** A row as stored (the columns the read journal maps). */
  record Stored(String persistenceId, long sequenceNr, long ordering, long writeTimestamp, String adapterManifest,
      int serId, String serManifest, byte[] payload, Integer metaSerId, String metaSerManifest, byte[] metaPayload) {}

  /** The row's envelopes (an adapter may turn one event into none or several); throws when it cannot be read. */
  List<EventEnvelope> decode(Stored r) {
    Object event = serialization.deserialize(r.payload(), r.serId(), r.serManifest()).get();
    Option<Object> meta = Option.empty();
    if (r.metaPayload() != null && r.metaSerId() != null) {
      meta = Option.apply(serialization.deserialize(r.metaPayload(), r.metaSerId(),
          r.metaSerManifest() == null ? "" : r.metaSerManifest()).get());
    }
    List<EventEnvelope> out = new ArrayList<>(1);
    for (Object e : scala.jdk.javaapi.CollectionConverters.asJava(
        adapters.get(event.getClass()).fromJournal(event, r.adapterManifest()).events())) {
      out.add(new EventEnvelope(Offset.sequence(r.ordering()), r.persistenceId(), r.sequenceNr(), e,
          r.writeTimestamp(), meta));
    }
    return out;
  }
}
