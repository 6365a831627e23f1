package dev.idem.testkit;

import dev.idem.testkit.internal.Fixtures;
import dev.idem.testkit.internal.PostgresProbe;
import dev.idem.testkit.internal.Started;
import java.lang.reflect.Executable;
import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * Resolves the test kit's fixtures by parameter type. Shared fixtures are started on first use and
 * kept in the root extension store, so each starts once per test JVM and closes when the run ends.
 * Registered through {@link IdemTestKit}; stateless and thread-safe.
 */
public final class IdemTestKitExtension implements ParameterResolver, ExecutionCondition {

    private static final ExtensionContext.Namespace NAMESPACE =
            ExtensionContext.Namespace.create(IdemTestKitExtension.class);
    private static final Set<Class<?>> SHARED =
            Set.of(KafkaBroker.class, RocketMqBroker.class, RedisEndpoint.class, PostgresDatabase.class);

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        Class<?> type = parameter.getParameter().getType();
        return type == TestNames.class || SHARED.contains(type);
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        Class<?> type = parameter.getParameter().getType();
        if (type == TestNames.class) {
            return TestNames.forTest(context.getTestMethod().map(Method::getName)
                    .orElse(context.getRequiredTestClass().getSimpleName()));
        }
        if (type == PostgresDatabase.class) {
            PostgresProbe probe = postgres(context);
            return probe.database().orElseThrow(() -> new ParameterResolutionException(probe.reason()));
        }
        return context.getRoot().getStore(NAMESPACE).getOrComputeIfAbsent(type, Fixtures::start, Started.class).value();
    }

    /**
     * Disables (reports as skipped, with the reason) a test or class that needs PostgreSQL when none
     * is reachable, unless {@code IDEM_TESTKIT_REQUIRE} asks for it to fail instead.
     */
    @Override
    public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
        if (!needsPostgres(context)) {
            return ConditionEvaluationResult.enabled("no PostgreSQL parameter");
        }
        PostgresProbe probe = postgres(context);
        if (probe.database().isPresent() || Fixtures.required("postgres")) {
            return ConditionEvaluationResult.enabled("PostgreSQL available or required");
        }
        return ConditionEvaluationResult.disabled("PostgreSQL not available: " + probe.reason());
    }

    private static PostgresProbe postgres(ExtensionContext context) {
        return context.getRoot().getStore(NAMESPACE)
                .getOrComputeIfAbsent(PostgresProbe.class, key -> Fixtures.postgres(), PostgresProbe.class);
    }

    private static boolean needsPostgres(ExtensionContext context) {
        Stream<Executable> executables = context.getTestMethod().isPresent()
                ? Stream.of(context.getTestMethod().get())
                : classLevelExecutables(context.getRequiredTestClass());
        return executables.flatMap(e -> Arrays.stream(e.getParameterTypes()))
                .anyMatch(PostgresDatabase.class::equals);
    }

    private static Stream<Executable> classLevelExecutables(Class<?> testClass) {
        Stream<Executable> lifecycle = Stream.<Class<?>>iterate(testClass, c -> c != null, Class::getSuperclass)
                .<Executable>flatMap(c -> Arrays.stream(c.getDeclaredMethods()))
                .filter(m -> m.isAnnotationPresent(BeforeAll.class) || m.isAnnotationPresent(BeforeEach.class)
                        || m.isAnnotationPresent(AfterAll.class) || m.isAnnotationPresent(AfterEach.class));
        return Stream.concat(Arrays.stream(testClass.getDeclaredConstructors()), lifecycle);
    }
}
