package io.otl.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.otl.node.config.ModelSection;
import io.otl.node.serving.ServingSettings;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.cluster.Cluster;
import org.apache.pekko.cluster.MemberStatus;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * The serving check's verdicts are logged under its own name, on both sides of a join: they went through
 * the journal check's shared {@code judge} and were logged under {@code JournalIdentityCheck}, so an
 * operator who filtered by the checker (or read the logger name) looked for a journal mismatch (trial t141).
 */
class ServingAgreementLogTest {
  private static final Optional<ModelSection> V0 =
      Optional.of(new ModelSection("openai-compatible", "http://v0:8000/v1", "sk-secret", "base-7b", 60, 3));

  private static ServingSettings serving(String backend) {
    return new ServingSettings(backend, "ray-jobs", "Qwen2.5-1.5B", false, "http://vllm:8000", "vllm-secret",
        Duration.ofSeconds(30), "", Duration.ofMillis(100), Duration.ofSeconds(1), 3);
  }

  @Test
  void aMembersWarningAndAJoinersRefusalAreLoggedUnderTheServingCheck() throws Exception {
    Config cluster = ServingAgreementCheck.config(serving("vllm-lora"), V0);
    Config joiner = ServingAgreementCheck.config(serving("static"), Optional.empty());
    Logger serving = (Logger) LoggerFactory.getLogger(ServingAgreementCheck.class);
    Logger journal = (Logger) LoggerFactory.getLogger(JournalIdentityCheck.class);
    ListAppender<ILoggingEvent> servingLines = new ListAppender<>();
    ListAppender<ILoggingEvent> journalLines = new ListAppender<>();
    servingLines.start();
    journalLines.start();
    serving.addAppender(servingLines);
    journal.addAppender(journalLines);
    ActorSystem member = ActorSystem.create("serving-agreement-log", ConfigFactory.parseString("""
        pekko.actor.provider = cluster
        pekko.remote.artery.canonical.hostname = 127.0.0.1
        pekko.remote.artery.canonical.port = 0
        """).withFallback(ConfigFactory.parseMap(java.util.Map.of(JournalIdentityCheck.INSTANCE,
            UUID.randomUUID().toString()))).withFallback(ConfigFactory.defaultReference()).resolve());
    try {
      Cluster c = Cluster.get(member);
      c.join(c.selfAddress());
      long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
      while (c.selfMember().status() != MemberStatus.up() && System.nanoTime() < deadline) Thread.sleep(100);
      assertEquals(MemberStatus.up(), c.selfMember().status());
      JournalIdentityCheck.register(member);

      // the member answering a node that serves otherwise: a warning, and the join let through
      new ServingAgreementCheck().check(joiner, cluster.withFallback(member.settings().config()));
      // the joiner, not a member of anything yet: its refusal
      new ServingAgreementCheck().check(cluster, joiner.withFallback(ConfigFactory.parseMap(java.util.Map.of(
          JournalIdentityCheck.INSTANCE, UUID.randomUUID().toString()))));

      List<String> lines = servingLines.list.stream().map(e -> e.getLevel() + " " + e.getFormattedMessage()).toList();
      assertEquals(2, lines.size(), String.valueOf(lines));
      assertTrue(lines.get(0).startsWith("WARN a node with other serving settings asks to join this cluster"), lines.get(0));
      assertTrue(lines.get(1).startsWith("ERROR refusing to join the cluster: this node's serving settings"), lines.get(1));
      assertTrue(journalLines.list.isEmpty(), "nothing under JournalIdentityCheck: " + journalLines.list);
    } finally {
      serving.detachAppender(servingLines);
      journal.detachAppender(journalLines);
      member.terminate();
    }
  }
}
