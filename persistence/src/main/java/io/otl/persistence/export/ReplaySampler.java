package io.otl.persistence.export;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Picks the older trajectories a continual job replays (issue #16): a weighted sample without
 * replacement, weight {@code 0.5^(age / data-half-life)}, so a trajectory one half-life old is half
 * as likely to be kept as a fresh one. Keys follow Efraimidis–Spirakis ({@code ln(u) / w}, the
 * largest k win) with {@code u} a hash of seed and session id: the same candidates and seed (the job
 * id) always give the same sample, whatever their order, so a repeated export writes the same bytes.
 */
public final class ReplaySampler {
  private ReplaySampler() {}

  /** An older trajectory and when it was first trained on. */
  public record Candidate(String sessionId, Instant at) {}

  /**
   * How many older trajectories join {@code fresh} new ones so that they are {@code fraction} of
   * the dataset: {@code round(fresh · f / (1 − f))}, at most {@code available}.
   */
  public static int count(int fresh, double fraction, int available) {
    if (fraction <= 0 || fresh <= 0 || available <= 0) return 0;
    long wanted = Math.round(fresh * fraction / (1 - fraction));
    return (int) Math.min(available, Math.max(1, wanted));
  }

  /** The weight of a candidate {@code age} old. */
  public static double weight(Duration age, Duration halfLife) {
    double ages = Math.max(0, age.toMillis()) / (double) halfLife.toMillis();
    return Math.pow(0.5, ages);
  }

  /**
   * The sample, oldest first (ties by id).
   *
   * @param now ages are measured from here
   */
  public static List<Candidate> sample(
      List<Candidate> candidates, int k, Instant now, Duration halfLife, String seed) {
    if (k <= 0 || candidates.isEmpty()) return List.of();
    record Keyed(Candidate c, double key) {}
    List<Keyed> keyed = new ArrayList<>(candidates.size());
    for (Candidate c : candidates) {
      double w = Math.max(weight(Duration.between(c.at(), now), halfLife), Double.MIN_NORMAL);
      keyed.add(new Keyed(c, Math.log(Hashes.unit(seed + "\u0000" + c.sessionId())) / w));
    }
    keyed.sort(Comparator.comparingDouble(Keyed::key).reversed()
        .thenComparing(x -> x.c().sessionId()));
    List<Candidate> chosen = new ArrayList<>();
    for (int i = 0; i < Math.min(k, keyed.size()); i++) chosen.add(keyed.get(i).c());
    chosen.sort(Comparator.comparing(Candidate::at).thenComparing(Candidate::sessionId));
    return chosen;
  }
}
