package dev.idem.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.redisson.api.RedissonClient;
import org.redisson.api.redisnode.RedisNodes;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The start-up check that Redis will not evict claim records ({@code maxmemory-policy noeviction}). */
final class NoEviction {

    private static final Logger LOG = LoggerFactory.getLogger(RedisClaimStore.class);

    private NoEviction() {
    }

    /** Warns when a master's policy may evict keys; says so when the policy cannot be read. */
    static void warnUnless(RedissonClient redisson, boolean cluster) {
        try {
            List<Map<String, String>> configs = new ArrayList<>();
            if (cluster) {
                redisson.getRedisNodes(RedisNodes.CLUSTER).getMasters()
                        .forEach(m -> configs.add(m.getConfig("maxmemory-policy")));
            } else if (redisson.getConfig().isSingleConfig()) {
                configs.add(redisson.getRedisNodes(RedisNodes.SINGLE).getInstance()
                        .getConfig("maxmemory-policy"));
            }
            for (Map<String, String> config : configs) {
                String policy = config.get("maxmemory-policy");
                if (policy != null && !policy.equals("noeviction")) {
                    LOG.warn("Redis maxmemory-policy is '{}', not 'noeviction': Redis may evict claim records, "
                            + "and the business check alone will then stand between a redelivery and a second effect",
                            policy);
                }
            }
        } catch (RuntimeException e) {
            LOG.info("could not read Redis maxmemory-policy ({}); make sure it is 'noeviction'", e.getMessage());
        }
    }
}
