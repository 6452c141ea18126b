package io.otl.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.persistence.export.ExportFormat;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/**
 * {@code export --help} said the default name was {@code <agent>-<format>-<since|all>-<until|now>}, and a
 * user who exported {@code --since 2026-11-01T08:30:00Z} looked for that text in the file name, which holds
 * {@code 20261101T083000Z} (trial t101). The help now says how the times are written, with an example that
 * is the name the command really gives.
 */
class ExportNameHelpTest {

  @Test
  void theHelpSaysHowTheDefaultNameWritesTheTimesWithAnExampleTheCommandGives() {
    String help = ExportCommand.USAGE.replaceAll("\\s+", " ");
    assertTrue(help.contains("the times in UTC in ISO-8601's basic form"), help);
    String example = ExportCommand.defaultName("support-bot", ExportFormat.SFT,
        Instant.parse("2026-11-01T08:30:00Z"), null);
    assertEquals("support-bot-sft-20261101T083000Z-now", example);
    assertTrue(help.contains("--since 2026-11-01T08:30:00Z gives " + example + ")"), help);
  }
}
