package dev.idem.micronaut.processor;

import static org.assertj.core.api.Assertions.assertThat;

import io.micronaut.annotation.processing.TypeElementVisitorProcessor;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;
import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Compiles listeners with Micronaut's visitor processor and these checks, as a user's build does. */
class IdemListenerChecksTest {

    @TempDir
    Path out;

    private static final String IMPORTS = """
            package example;
            import dev.idem.core.Delivery;
            import dev.idem.micronaut.Idempotent;
            import dev.idem.micronaut.IdempotentListener;
            import dev.idem.micronaut.KeyFrom;
            import io.micronaut.configuration.kafka.annotation.ErrorStrategy;
            import io.micronaut.configuration.kafka.annotation.ErrorStrategyValue;
            import io.micronaut.configuration.kafka.annotation.KafkaListener;
            import io.micronaut.configuration.kafka.annotation.Topic;
            import jakarta.inject.Singleton;
            import org.apache.kafka.clients.consumer.ConsumerRecord;
            """;

    private static final String RETRYING = "@KafkaListener(groupId = \"billing\", errorStrategy = @ErrorStrategy("
            + "value = ErrorStrategyValue.RETRY_ON_ERROR, retryCount = Integer.MAX_VALUE))\n";

    /** The errors of compiling the given classes (name, body after the imports). */
    private List<String> errors(String... classes) throws IOException {
        List<JavaFileObject> sources = new ArrayList<>();
        for (int i = 0; i < classes.length; i += 2) {
            String name = classes[i];
            String text = IMPORTS + classes[i + 1];
            sources.add(new SimpleJavaFileObject(URI.create("string:///example/" + name + ".java"),
                    JavaFileObject.Kind.SOURCE) {
                @Override
                public CharSequence getCharContent(boolean ignoreEncodingErrors) {
                    return text;
                }
            });
        }
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
        Files.createDirectories(out);
        JavaCompiler.CompilationTask task = javac.getTask(null, null, diagnostics,
                List.of("-d", out.toString(), "-classpath", System.getProperty("java.class.path"), "-parameters"),
                null, sources);
        // The processor users put on their path; it finds this module's visitor as a service.
        task.setProcessors(List.of(new TypeElementVisitorProcessor()));
        task.call();
        return diagnostics.getDiagnostics().stream().filter(d -> d.getKind() == Diagnostic.Kind.ERROR)
                .map(d -> d.getMessage(Locale.ROOT)).collect(Collectors.toList());
    }

    @Test
    void aGoodListenerAndAGoodWrappedListenerCompile() throws IOException {
        assertThat(errors("Inventory", """
                @Singleton
                public class Inventory {
                    @IdempotentListener(topic = "orders", group = "inventory", key = "id")
                    public void deduct(String order, Delivery<String> delivery) {
                    }
                }
                """, "Billing", RETRYING + """
                public class Billing {
                    @Topic("payments")
                    @Idempotent(keySource = KeyFrom.MESSAGE_KEY)
                    public void charge(ConsumerRecord<String, String> record) {
                    }
                }
                """)).isEmpty();
    }

    @Test
    void aListenerWithoutAPayloadParameterDoesNotCompile() throws IOException {
        assertThat(errors("Inventory", """
                @Singleton
                public class Inventory {
                    @IdempotentListener(topic = "orders", group = "inventory", key = "id")
                    public void deduct(Delivery<String> delivery) {
                    }
                }
                """)).singleElement().asString().contains("example.Inventory.deduct has no payload parameter");
    }

    @Test
    void twoPayloadParametersDoNotCompile() throws IOException {
        assertThat(errors("Inventory", """
                @Singleton
                public class Inventory {
                    @IdempotentListener(topic = "orders", group = "inventory", key = "id")
                    public void deduct(String order, String other) {
                    }
                }
                """)).singleElement().asString().contains("has two payload parameters [order, other]");
    }

    @Test
    void twoListenersWithOneNameDoNotCompile() throws IOException {
        assertThat(errors("Inventory", """
                @Singleton
                public class Inventory {
                    @IdempotentListener(topic = "orders", group = "inventory", key = "id")
                    public void deduct(String order) {
                    }
                }
                """, "Audit", """
                @Singleton
                public class Audit {
                    @IdempotentListener(name = "inventory-orders", topic = "audit", group = "audit", key = "id")
                    public void record(String order) {
                    }
                }
                """)).singleElement().asString().contains("two Idem listeners are named 'inventory-orders'");
    }

    @Test
    void aWrappedListenerAndAListenerWithOneNameDoNotCompile() throws IOException {
        assertThat(errors("Inventory", """
                @Singleton
                public class Inventory {
                    @IdempotentListener(topic = "payments", group = "billing", key = "id")
                    public void deduct(String order) {
                    }
                }
                """, "Billing", RETRYING + """
                public class Billing {
                    @Topic("payments")
                    @Idempotent
                    public void charge(ConsumerRecord<String, String> record) {
                    }
                }
                """)).singleElement().asString().contains("two Idem listeners are named 'billing-payments'");
    }

    @Test
    void aWrappedListenerUnderMicronautKafkasDefaultErrorStrategyDoesNotCompile() throws IOException {
        assertThat(errors("Billing", """
                @KafkaListener(groupId = "billing")
                public class Billing {
                    @Topic("payments")
                    @Idempotent
                    public void charge(ConsumerRecord<String, String> record) {
                    }
                }
                """)).singleElement().asString().contains("must have errorStrategy").contains("it has NONE");
    }

    @Test
    void aWrappedListenerWithoutTheRecordOrInAFinalClassDoesNotCompile() throws IOException {
        List<String> errors = errors("Billing", RETRYING + """
                public final class Billing {
                    @Topic("payments")
                    @Idempotent(keySource = KeyFrom.PROPERTY)
                    public void charge(String value) {
                    }
                }
                """);
        assertThat(errors).anyMatch(e -> e.contains("the class must not be final"))
                .anyMatch(e -> e.contains("must declare the ConsumerRecord parameter"))
                .anyMatch(e -> e.contains("keySource PROPERTY is for @IdempotentListener"));
    }
}
