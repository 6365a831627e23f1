package example.readme;

// tag::testkit[]
import dev.idem.redis.RedisClaimStore;
import dev.idem.testkit.IdemTestKit;
import dev.idem.testkit.KafkaBroker;
import dev.idem.testkit.PostgresDatabase;
import dev.idem.testkit.RedisEndpoint;
import dev.idem.testkit.TestNames;
import dev.idem.testkit.TopicMessage;
import java.util.List;
// end::testkit[]
import org.junit.jupiter.api.Test;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/** README, "Testing your handlers with the test kit": the skeleton, run as it is shown. */
// tag::testkit[]
@IdemTestKit
class OrderHandlerIT {

    @Test
    void stockIsDeductedOnce(KafkaBroker kafka, RedisEndpoint redis, PostgresDatabase db, TestNames names) {
        kafka.createTopic(names.topic(), 3);          // unique per test: tests never share data
        Config config = new Config();
        config.useSingleServer().setAddress(redis.uri().toString());        // uri() is a java.net.URI
        RedissonClient redisson = Redisson.create(config);
        RedisClaimStore claims = RedisClaimStore.builder(redisson).keyPrefix(names.keyPrefix()).build();
        // ... produce to names.topic(), consume as names.group(); a DataSource for db: e.g.
        // PGSimpleDataSource with db.jdbcUrl(), db.user(), db.password()
        List<TopicMessage> letters = kafka.read(names.topic() + ".DLT");   // every letter so far, none yet
        // letters.get(0).header("idem-reason"), .keyText(), .text(); rocketMq.read("<topic>_DLQ") alike
        redisson.shutdown();                          // after the consumers: the client is yours
    }
}
// end::testkit[]
