package io.otl.http;

import java.util.concurrent.CompletionStage;

/** One condition of readiness (journal reachable, cluster member up); the node supplies them. */
public interface ReadinessCheck {
  String name();

  CompletionStage<Result> check();

  record Result(boolean ok, String detail) {
    public static Result up(String detail) {
      return new Result(true, detail);
    }

    public static Result down(String detail) {
      return new Result(false, detail);
    }
  }
}
