package io.otl.node.cluster;

import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;

/** What node processes' management endpoints say of the cluster's members, for the multi-process cluster tests. */
final class ClusterMembers {
  private final RetryingClient client;

  ClusterMembers(RetryingClient client) {
    this.client = client;
  }

  /** {@code GET /cluster/members} of {@code n}, empty while it does not answer 200. */
  Optional<JsonNode> json(NodeProcess n) {
    Optional<RetryingClient.Reply> r = client.once("GET", n.managementPort, "/cluster/members", null,
        Duration.ofSeconds(3));
    return r.filter(x -> x.status() == 200).map(RetryingClient.Reply::json);
  }

  /** How many members {@code n} sees Up; -1 while it sees one unreachable. */
  Optional<Integer> up(NodeProcess n) {
    return json(n).map(json -> {
      int up = 0;
      for (JsonNode m : json.path("members")) if ("Up".equals(m.path("status").asText())) up++;
      return json.path("unreachable").size() == 0 ? up : -1;
    });
  }

  /** Waits until every node of {@code expected} sees {@code count} members Up; fails at once if one exits. */
  void awaitUp(List<NodeProcess> expected, int count, Duration bound) throws InterruptedException {
    long end = System.nanoTime() + bound.toNanos();
    while (!expected.stream().allMatch(n -> {
      if (!n.alive()) fail(n.name + " exited\n" + n.tail(60));
      return up(n).orElse(0) == count;
    })) {
      if (System.nanoTime() > end) {
        fail(count + " members Up not within " + bound.toSeconds() + " s\n"
            + expected.stream().map(n -> n.tail(25)).collect(Collectors.joining("\n")));
      }
      Thread.sleep(250);
    }
  }
}
