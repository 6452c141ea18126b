package io.otl.node.audit;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.otl.node.testing.TestDatabases;
import io.otl.persistence.JournalSchema;
import io.otl.persistence.JournalSettings;
import java.sql.Connection;
import java.sql.Statement;
import java.util.Map;
import java.util.UUID;

/** The audit on PostgreSQL (skipped loudly without it); verify runs on a copy in a new schema. */
class AuditPostgresTest extends AuditContract {
  @Override
  Config database() {
    return TestDatabases.postgres();
  }

  @Override
  Config copyJournal(String name) throws Exception {
    String url = db.getString("agentscope.training.db.url");
    String schema = url.substring(url.indexOf("currentSchema=") + "currentSchema=".length()).split("&")[0];
    String copySchema = "otl_audit_" + name + "_" + UUID.randomUUID().toString().replace("-", "").substring(0, 8);
    try (Connection c = JournalSchema.connect(JournalSettings.fromConfig(journalTraining(db)));
        Statement st = c.createStatement()) {
      st.execute("CREATE SCHEMA " + copySchema);
    }
    Config copy = ConfigFactory.parseMap(Map.of(
        "agentscope.training.db.url", url.replace("currentSchema=" + schema, "currentSchema=" + copySchema)))
        .withFallback(db);
    JournalSettings copySettings = JournalSettings.fromConfig(journalTraining(copy));
    JournalSchema.ensure(copySettings);
    try (Connection c = JournalSchema.connect(copySettings); Statement st = c.createStatement()) {
      st.execute("INSERT INTO " + copySchema + ".event_journal SELECT * FROM " + schema + ".event_journal");
    }
    return copy;
  }
}
