/**
 * The Trinity simulator (design §5): one pekko-http server that answers like a Ray head's Jobs API
 * and like a Trinity {@code serve} proxy, for the embedded default, docker compose and tests. It is
 * labelled everywhere: header {@code X-Trinity-Simulator: true} on every response and a banner in
 * the log.
 *
 * <p>Run it alone: {@code java -jar otl-node.jar simulator --port 8265 --work-dir ./data/simulator
 * --pending 1s --running 5s} ({@link io.otl.node.simulator.SimulatorCommand}), or in-process with
 * {@link io.otl.node.simulator.TrinitySimulator#start}. Point both {@code trinity-endpoint}s at it.
 *
 * <p>Test hooks: submission metadata {@code "simulate": "fail"} (job fails instead of
 * succeeding), {@code "simulate": "no-checkpoint"} (succeeds without a checkpoint), {@code
 * "metric.<name>": "<number>"} (overrides a value in {@code eval_metrics.json}; defaults
 * task-success-rate 0.82, user-satisfaction 0.78, response-latency 850). Admin endpoints: {@code
 * GET /simulator/stats} (per submission id: {@code accepted}, {@code duplicates}, {@code status}),
 * {@code GET /simulator/feedback} (every {@code /feedback} body as received, the commit count and
 * how many sessions {@code /allocate} handed out),
 * {@code POST /simulator/jobs/<id>/fail}, {@code POST /simulator/jobs/<id>/finish} (a RUNNING job
 * ends now, as its timer would end it), {@code POST /simulator/jobs/<id>/quality} (the quality
 * of the checkpoint the job will write, scored by a chained bench: {@code bench_scores.json}).
 */
package io.otl.node.simulator;
