package io.otl.core.model;

import io.otl.core.Sha256;
import io.otl.core.model.Deployments.Deployment;
import io.otl.core.model.ModelState.Models;
import io.otl.core.model.ModelState.RollingOut;
import io.otl.core.model.ModelState.State;
import io.otl.core.model.ModelState.VersionRecord;
import java.util.Optional;

/**
 * Where the sessions of one agent go: the stable version, and at most one candidate with the
 * share of sessions it currently receives.
 *
 * <p>Each session gets a fixed bucket in [0, 1) from a SHA-256 hash of its id (with a prefix of
 * its own, so the bucket is independent of other hashes of the session id such as the
 * collector's sampling decision). A new session whose bucket is below the candidate's ratio goes
 * to the candidate, any other to the stable. A session keeps the version it started on while that
 * version serves: a rollout step that raises the ratio (5 % → 20 % → 50 % → 100 %) sends the new
 * sessions of the larger bucket range to the candidate and moves no running one. Only a version
 * that stops serving moves its sessions: a rollback sends the candidate's to the stable, a
 * promotion the old stable's to the new one.
 *
 * @param candidateRatio share of sessions for the candidate, 0 when there is none
 */
public record RoutingTable(
    String stableVersion,
    String stableEndpoint,
    String candidateVersion,
    String candidateEndpoint,
    double candidateRatio) {

  /** A routing target. */
  public record Target(String version, String endpoint) {}

  public static final RoutingTable EMPTY = new RoutingTable(null, null, null, null, 0);

  /** The routing of a {@link ModelVersion} state: its stable, and its candidate while in rollout. */
  static RoutingTable of(State s) {
    Models m = s.models();
    VersionRecord stable = m.stable() == null ? null : m.require(m.stable());
    if (s instanceof RollingOut r) {
      VersionRecord cand = m.require(r.rollout().candidate());
      return new RoutingTable(stable == null ? null : stable.version(),
          stable == null ? null : endpointOf(m, stable), cand.version(), endpointOf(m, cand), r.rollout().ratio());
    }
    return stable == null ? EMPTY
        : new RoutingTable(stable.version(), endpointOf(m, stable), null, null, 0);
  }

  /** The confirmed deployment's endpoint, else the registered one (versions without deployment). */
  private static String endpointOf(Models m, VersionRecord v) {
    Deployment d = m.deployments().get(v.version());
    return d != null && d.status() == Deployments.Status.CONFIRMED ? d.endpoint() : v.endpoint();
  }

  /** The version serving a session not started yet, or empty when the agent has no serving version. */
  public Optional<Target> route(String sessionId) {
    return route(sessionId, null);
  }

  /**
   * The version serving this session, or empty when the agent has no serving version.
   *
   * @param pinnedVersion the version the session started on, null if none: kept while it is the
   *     stable or the candidate in rollout, so a rollout step that raises the ratio moves no running
   *     session; a version that no longer serves (rolled back, retired) gives way to the bucket's
   */
  public Optional<Target> route(String sessionId, String pinnedVersion) {
    if (pinnedVersion != null) {
      if (pinnedVersion.equals(candidateVersion) && candidateRatio > 0) {
        return Optional.of(new Target(candidateVersion, candidateEndpoint));
      }
      if (pinnedVersion.equals(stableVersion)) return Optional.of(new Target(stableVersion, stableEndpoint));
    }
    boolean hasCandidate = candidateVersion != null && candidateRatio > 0;
    if (hasCandidate && (stableVersion == null || bucket(sessionId) < candidateRatio)) {
      return Optional.of(new Target(candidateVersion, candidateEndpoint));
    }
    if (stableVersion != null) {
      return Optional.of(new Target(stableVersion, stableEndpoint));
    }
    return Optional.empty();
  }

  /** The session's fixed routing bucket, uniform in [0, 1). */
  public static double bucket(String sessionId) {
    return (hash64("route:", sessionId) >>> 11) * 0x1.0p-53;
  }

  /** First 64 bits of SHA-256(prefix + value), as a signed long. */
  static long hash64(String prefix, String value) {
    return Sha256.first64(prefix + value);
  }
}
