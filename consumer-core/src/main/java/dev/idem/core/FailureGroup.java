package dev.idem.core;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * Which cause a dead letter belongs to: its failure's class and the first frame of the application's
 * own code in its stack trace (the site), hashed into a short fingerprint, so the thousands of letters
 * an incident leaves fall into its handful of causes. Line numbers are left out of the fingerprint: a
 * redeploy that moves a line keeps the group. Letters without an exception are grouped by reason.
 * Immutable.
 *
 * @param fingerprint    eight hexadecimal digits
 * @param exceptionClass the failure's class, empty when there was none
 * @param site           the first application frame ({@code com.shop.Stock.reserve(Stock.java:42)}),
 *                       empty when the trace has none
 */
public record FailureGroup(String fingerprint, String exceptionClass, String site) {

    // Frames of these packages are the JDK's, the brokers' clients', the frameworks' or Idem's own:
    // the application's code is the first frame outside them.
    private static final List<String> LIBRARY_PACKAGES = List.of("java.", "javax.", "jakarta.", "jdk.", "sun.",
            "com.sun.", "kotlin.", "scala.", "dev.idem.core.", "dev.idem.kafka.", "dev.idem.rocketmq.",
            "dev.idem.redis.", "dev.idem.spring.", "dev.idem.micronaut.", "org.apache.kafka.", "org.apache.rocketmq.",
            "org.springframework.", "io.micronaut.", "io.micrometer.", "io.opentelemetry.", "org.slf4j.", "ch.qos.",
            "com.fasterxml.", "io.netty.", "reactor.", "org.redisson.", "org.postgresql.", "com.zaxxer.", "org.h2.",
            "org.mariadb.", "com.mysql.", "org.hibernate.", "org.junit.", "org.apache.camel.");

    private static final Pattern HIDDEN_CLASS = Pattern.compile("/0x[0-9a-fA-F]+");

    /**
     * The group of a failure as a dead letter describes it.
     *
     * @param exceptionClass the failure's class, empty or null when there was none
     * @param stackTrace     its stack trace as text ({@code \tat pkg.Class.method(File.java:1)} lines), or null
     * @param reason         why it was dead-lettered, for letters without an exception
     */
    public static FailureGroup of(@Nullable String exceptionClass, @Nullable String stackTrace, String reason) {
        String type = exceptionClass == null ? "" : exceptionClass;
        String site = site(stackTrace);
        String basis = type.isEmpty() ? "reason\0" + reason : type + "\0" + withoutLine(site);
        return new FailureGroup(hash(basis), type, site);
    }

    /** The first frame of the application's code in {@code stackTrace}, before any "Caused by"; empty when none. */
    public static String site(@Nullable String stackTrace) {
        if (stackTrace == null) {
            return "";
        }
        for (String raw : stackTrace.split("\n")) {
            String line = raw.stripTrailing();
            if (line.startsWith("Caused by:")) {
                break;
            }
            // Frames are "\tat class.method(source)": a message's own lines (Jackson's " at [Source: ...")
            // are not frames.
            int open = line.indexOf('(');
            if (line.startsWith("\tat ") && open > 4 && line.endsWith(")")) {
                // Hidden classes end in "/0x..."; a class loader and module may come first
                // ("java.base/java.lang.Thread.run", "app//com.shop.Stock.reserve").
                String frame = HIDDEN_CLASS.matcher(line.substring(4)).replaceAll("");
                String name = frame.substring(frame.lastIndexOf('/', frame.indexOf('(')) + 1);
                if (LIBRARY_PACKAGES.stream().noneMatch(name::startsWith)) {
                    return name;
                }
            }
        }
        return "";
    }

    private static String withoutLine(String site) {
        int paren = site.indexOf('(');
        return paren < 0 ? site : site.substring(0, paren);
    }

    private static String hash(String text) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest, 0, 4);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform has SHA-256", e);
        }
    }
}
