package dev.idem.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Which ports a local cluster's nodes get: their bus ports (port + 10000) are nobody's port. */
class LocalRedisClusterPortsTest {

    @Test
    void aPortThatIsAnotherNodesBusPortIsNotGivenToANode() {
        // What CI met: 35643 first, then 45643 (35643's bus port, not bound yet, so free).
        Deque<Integer> free = new ArrayDeque<>(List.of(35643, 45643, 40945, 41000));

        List<Integer> ports = LocalRedisCluster.clusterPorts(3, free::pop, port -> true);

        assertThat(ports).containsExactly(35643, 40945, 41000);
    }

    @Test
    void aPortWhoseBusPortIsAnotherNodesPortIsNotGivenEither() {
        Deque<Integer> free = new ArrayDeque<>(List.of(45643, 35643, 40945, 41000));

        List<Integer> ports = LocalRedisCluster.clusterPorts(3, free::pop, port -> true);

        assertThat(ports).containsExactly(45643, 40945, 41000);
    }
}
