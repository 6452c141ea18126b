package io.otl.core.model;

import io.otl.core.entity.Plan;
import io.otl.core.model.ModelEvents.EvaluationStarted;
import io.otl.core.model.ModelEvents.Event;
import io.otl.core.model.ModelEvents.OfflineGatePassed;
import io.otl.core.model.ModelEvents.VersionPromoted;
import io.otl.core.model.ModelEvents.VersionRegistered;
import io.otl.core.model.ModelState.State;
import io.otl.core.model.ModelState.VersionRecord;
import io.otl.core.serving.ServingBackend;
import io.otl.core.serving.ServingTarget;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;

/**
 * States of {@link ModelVersion} built the way the entity builds them: by applying journal events
 * through the pure event handler, so the planners under test start from states a node can be in.
 */
final class ModelJournal {

  static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");

  private ModelJournal() {}

  static State replay(List<? extends Event> events) {
    State s = ModelVersion.initialState();
    for (Event e : events) {
      s = ModelEventHandler.apply(s, e);
    }
    return s;
  }

  /** A version registered by hand that passed the (skipped) gate: READY. */
  static List<Event> ready(String version, Instant at) {
    return List.of(
        new VersionRegistered(version, artifact(version), "http://" + version + ":8000", null, Map.of(), true, at),
        new EvaluationStarted(version, null, at),
        new OfflineGatePassed(version, List.of(), "registered by hand", at));
  }

  /** {@code version} READY and promoted as the agent's first version: STABLE. */
  static List<Event> stable(String version, Instant at) {
    List<Event> events = new ArrayList<>(ready(version, at));
    events.add(new VersionPromoted(version, null, null, false, "first version", List.of(), at));
    return events;
  }

  /** A local adapter directory: a backend that loads versions loads it even when registered by hand. */
  static String artifact(String version) {
    return "file:///ckpt/" + version;
  }

  static Plan<State, Event> plan(State s) {
    return new Plan<>(s, ModelEventHandler::apply);
  }

  static VersionRecord version(State s, String version) {
    return s.models().require(version);
  }

  @SafeVarargs
  static List<Event> concat(List<? extends Event>... parts) {
    List<Event> all = new ArrayList<>();
    for (List<? extends Event> p : parts) {
      all.addAll(p);
    }
    return all;
  }

  /**
   * A backend that loads adapters into one server, named as docs/serving.md says vllm-lora names
   * them ({@code <agent>-<version>-<8 hex of SHA-256(artifact)>}). Planning is pure, so a call
   * fails the test.
   */
  static class LoadingBackend implements ServingBackend {
    static final String URL = "http://vllm:8000/v1";
    private final String url;

    LoadingBackend() {
      this(URL);
    }

    /** @param url the server's URL as the current configuration gives it */
    LoadingBackend(String url) {
      this.url = url;
    }

    @Override
    public String name() {
      return "vllm-lora";
    }

    @Override
    public ServingTarget target(String agentId, String version, String artifact, String registeredEndpoint) {
      return new ServingTarget(url, agentId + "-" + version + "-" + sha256Hex8(artifact));
    }

    @Override
    public boolean callsServer() {
      return true;
    }

    @Override
    public CompletionStage<Void> deploy(ServingTarget target, String artifact) {
      throw new AssertionError("planning must not call the backend");
    }

    @Override
    public CompletionStage<Void> undeploy(ServingTarget target) {
      throw new AssertionError("planning must not call the backend");
    }

    static String sha256Hex8(String s) {
      try {
        byte[] d = MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
        return HexFormat.of().formatHex(d, 0, 4);
      } catch (NoSuchAlgorithmException e) {
        throw new IllegalStateException(e);
      }
    }
  }
}
