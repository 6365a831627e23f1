package dev.idem.testkit;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Gives a test class real Kafka, RocketMQ, Redis and PostgreSQL fixtures, injected as parameters
 * of test methods, lifecycle methods or constructors.
 *
 * <p>Where they come from is chosen by the system property {@code idem.testkit}: {@code embedded}
 * (the default: in-process brokers, a running or embedded Redis, a running PostgreSQL) or
 * {@code containers} (Testcontainers, needs a Docker engine). A test that needs PostgreSQL and
 * finds none is reported skipped with the reason, unless the environment variable
 * {@code IDEM_TESTKIT_REQUIRE} contains {@code postgres}, in which case it fails.
 */
@Documented
@Inherited
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.TYPE, ElementType.METHOD})
@ExtendWith(IdemTestKitExtension.class)
public @interface IdemTestKit {
}
