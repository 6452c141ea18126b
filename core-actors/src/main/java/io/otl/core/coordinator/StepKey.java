package io.otl.core.coordinator;

/**
 * A call to a port that may be in flight (or a step whose failures drive a back-off). Not
 * persisted: it keeps one call per step, whatever triggers it (a timer, a recovery, a command).
 *
 * @param id the job id, session id or candidate version the call is about; empty for calls made
 *     once per entity (polling, proxy metrics) and for failure counters shared by all ids
 * @param attempt the submission attempt (0 for every other step)
 */
record StepKey(Step step, String id, int attempt) {

  enum Step {
    EXPORT,
    SUBMIT,
    POLL,
    CANCEL,
    HAND_OVER,
    FORWARD,
    METRICS,
    PROXY_HAND_OVER
  }

  static StepKey of(Step step) {
    return new StepKey(step, "", 0);
  }

  static StepKey of(Step step, String id) {
    return new StepKey(step, id, 0);
  }

  static StepKey submit(String jobId, int attempt) {
    return new StepKey(Step.SUBMIT, jobId, attempt);
  }
}
