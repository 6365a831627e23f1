package dev.idem.listener;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;

/**
 * One setting a declared listener takes from its annotation or its properties: its property key
 * ({@code max-deferral}), the annotation member or bean property that carries it ({@code maxDeferral}),
 * its type and which listeners take it. No default lives here: a setting left unset keeps the
 * builder's. Adding a setting is a constant here (it registers itself), its line where it is applied
 * ({@link ListenerProcessors} or {@link ListenerConsumers}) and, for Spring Boot, a property.
 *
 * @param <T> the value's type
 */
public final class ListenerSetting<T> {

    /** Which listeners take a setting. */
    public enum Scope {
        /** Every listener, declared or wrapped: the processor's settings. */
        ANY,
        /** Listeners whose consumer Idem runs, on any broker. */
        OWN_CONSUMER,
        /** Listeners on Idem's Kafka consumer. */
        KAFKA,
        /** Listeners on Idem's Kafka share consumer. */
        KAFKA_SHARE,
        /** Listeners on Idem's RocketMQ consumer. */
        ROCKETMQ;

        /** Whether a listener on {@code broker} (wrapped: its framework's consumer) takes it. */
        boolean takenBy(ListenerBroker broker, boolean wrapped) {
            return switch (this) {
                case ANY -> true;
                case OWN_CONSUMER -> !wrapped;
                case KAFKA -> !wrapped && broker == ListenerBroker.KAFKA;
                case KAFKA_SHARE -> !wrapped && broker == ListenerBroker.KAFKA_SHARE;
                case ROCKETMQ -> !wrapped && broker == ListenerBroker.ROCKETMQ;
            };
        }
    }

    // Every setting, in declaration order: each constant adds itself, so none can be left out.
    private static final List<ListenerSetting<?>> ALL = new ArrayList<>();

    /** Handler attempts before the dead letter. */
    public static final ListenerSetting<Integer> MAX_ATTEMPTS = new ListenerSetting<>("max-attempts", Integer.class, Scope.ANY);
    /** The claim's lease. */
    public static final ListenerSetting<Duration> LEASE = new ListenerSetting<>("lease", Duration.class, Scope.ANY);
    /** Where dead letters go; unset or blank, the broker's default ({@code <topic>.DLT}, {@code <topic>_DLQ}). */
    public static final ListenerSetting<String> DEAD_LETTER_TOPIC =
            new ListenerSetting<>("dead-letter-topic", String.class, Scope.ANY);
    /** The first retry's backoff. */
    public static final ListenerSetting<Duration> BACKOFF_INITIAL =
            new ListenerSetting<>("backoff-initial", Duration.class, Scope.ANY);
    /** The largest retry backoff. */
    public static final ListenerSetting<Duration> BACKOFF_MAX = new ListenerSetting<>("backoff-max", Duration.class, Scope.ANY);
    /** The backoff's jitter, a fraction. */
    public static final ListenerSetting<Double> BACKOFF_JITTER =
            new ListenerSetting<>("backoff-jitter", Double.class, Scope.ANY);
    /** How long infrastructure trouble is deferred uncounted. */
    public static final ListenerSetting<Duration> MAX_DEFERRAL =
            new ListenerSetting<>("max-deferral", Duration.class, Scope.ANY);
    /** Tries of the compensation before its outcome is recorded as failed. */
    public static final ListenerSetting<Integer> COMPENSATION_ATTEMPTS =
            new ListenerSetting<>("compensation-attempts", Integer.class, Scope.ANY);
    /** Exception classes never retried: the first such failure sends the message to the dead letter. */
    public static final ListenerSetting<Class<?>[]> FATAL_EXCEPTIONS =
            new ListenerSetting<>("fatal-exceptions", classes(), Scope.ANY);
    /** Exception classes that mean infrastructure trouble: deferred uncounted for up to the deferral bound. */
    public static final ListenerSetting<Class<?>[]> INFRASTRUCTURE_EXCEPTIONS =
            new ListenerSetting<>("infrastructure-exceptions", classes(), Scope.ANY);
    /** How long stopping waits for the listener's running records. */
    public static final ListenerSetting<Duration> CLOSE_TIMEOUT =
            new ListenerSetting<>("close-timeout", Duration.class, Scope.ANY);
    /** Work at once: Kafka partitions, share-group records, RocketMQ threads. */
    public static final ListenerSetting<Integer> CONCURRENCY =
            new ListenerSetting<>("concurrency", Integer.class, Scope.OWN_CONSUMER);
    /** Kafka: how long the consumer may go without joining its group before it reports it. */
    public static final ListenerSetting<Duration> JOIN_TIMEOUT =
            new ListenerSetting<>("join-timeout", Duration.class, Scope.KAFKA);
    /** Kafka share groups: how often the group's delivery limit is read again. */
    public static final ListenerSetting<Duration> DELIVERY_LIMIT_REFRESH =
            new ListenerSetting<>("delivery-limit-refresh", Duration.class, Scope.KAFKA_SHARE);
    /** RocketMQ: messages per listener call, claimed in one round trip. */
    public static final ListenerSetting<Integer> BATCH_SIZE = new ListenerSetting<>("batch-size", Integer.class, Scope.ROCKETMQ);
    /** RocketMQ: each queue consumed in order. */
    public static final ListenerSetting<Boolean> ORDERLY = new ListenerSetting<>("orderly", Boolean.class, Scope.ROCKETMQ);
    /** RocketMQ: where a new group starts. */
    public static final ListenerSetting<ConsumeFrom> CONSUME_FROM =
            new ListenerSetting<>("consume-from", ConsumeFrom.class, Scope.ROCKETMQ);


    private final String key;
    private final String member;
    private final Class<T> type;
    private final Scope scope;

    private ListenerSetting(String key, Class<T> type, Scope scope) {
        this.key = key;
        this.member = camel(key);
        this.type = type;
        this.scope = scope;
        ALL.add(this);
    }

    /** Every setting. */
    public static List<ListenerSetting<?>> all() {
        return Collections.unmodifiableList(ALL);
    }

    /** The property key under a listener's section, {@code max-deferral}. */
    public String key() {
        return key;
    }

    /** The annotation member or bean property that carries it, {@code maxDeferral}. */
    public String member() {
        return member;
    }

    public Class<T> type() {
        return type;
    }

    public Scope scope() {
        return scope;
    }

    /**
     * The value written as text: a whole number, a decimal, {@code true}/{@code false}, a duration
     * ({@code 500ms}, {@code 30s}, {@code 2m}, {@code 1h}, {@code 1d} or ISO-8601, positive), exception
     * classes by name, separated by commas, or, for an enumeration, its constant in any case with dashes
     * ({@code first-offset}).
     *
     * @throws IllegalArgumentException saying what was expected
     */
    public T parse(String text) {
        String value = text.trim();
        Object parsed;
        if (type == Integer.class) {
            try {
                parsed = Integer.parseInt(value);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("must be a whole number but was '" + text + "'", e);
            }
        } else if (type == Double.class) {
            try {
                parsed = Double.parseDouble(value);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("must be a number like 0.2 but was '" + text + "'", e);
            }
        } else if (type == Boolean.class) {
            parsed = switch (value) {
                case "true" -> true;
                case "false" -> false;
                default -> throw new IllegalArgumentException("must be true or false but was '" + text + "'");
            };
        } else if (type == Duration.class) {
            parsed = Durations.parse(value).orElseThrow(() -> new IllegalArgumentException(
                    "must be a duration like 30s, 500ms, 2m or PT30S but was '" + text + "'"));
        } else if (type == Class[].class) {
            parsed = exceptions(value.isEmpty() ? new String[0] : value.split("\\s*,\\s*"), text);
        } else if (type.isEnum()) {
            parsed = constant(value, text);
        } else {
            parsed = value;
        }
        return type.cast(parsed);
    }

    @Override
    public String toString() {
        return key;
    }

    /**
     * Checks a value before anything starts: whole numbers are at least 1 (0 on an annotation means
     * unset and never gets here), durations positive, a fraction within 0 and 1, exception classes
     * {@code Throwable}s.
     *
     * @throws IllegalArgumentException saying what was expected
     */
    T check(T value) {
        if (value instanceof Integer n && n < 1) {
            throw new IllegalArgumentException("must be >= 1 but was " + n);
        }
        if (value instanceof Duration d && (d.isNegative() || d.isZero())) {
            throw new IllegalArgumentException("must be a positive duration but was " + d);
        }
        if (value instanceof Double fraction && !(fraction >= 0 && fraction <= 1)) {
            throw new IllegalArgumentException("must be between 0 and 1 but was " + fraction);
        }
        if (value instanceof Class<?>[] classes) {
            for (Class<?> c : classes) {
                if (!Throwable.class.isAssignableFrom(c)) {
                    throw new IllegalArgumentException("must name exception classes but " + c.getName() + " is none");
                }
            }
        }
        return value;
    }

    @SuppressWarnings("unchecked")
    private static Class<Class<?>[]> classes() {
        return (Class<Class<?>[]>) (Class<?>) Class[].class;
    }

    private static Class<?>[] exceptions(String[] names, String text) {
        Class<?>[] classes = new Class<?>[names.length];
        ClassLoader loader = Thread.currentThread().getContextClassLoader();
        for (int i = 0; i < names.length; i++) {
            try {
                classes[i] = Class.forName(names[i], false, loader != null ? loader : ListenerSetting.class.getClassLoader());
            } catch (ClassNotFoundException e) {
                throw new IllegalArgumentException("names a class that is not there: '" + names[i] + "' (in '" + text
                        + "')", e);
            }
            if (!Throwable.class.isAssignableFrom(classes[i])) {
                throw new IllegalArgumentException("must name exception classes but " + names[i] + " is none");
            }
        }
        return classes;
    }

    private Object constant(String value, String text) {
        String wanted = value.replace('-', '_').toUpperCase(Locale.ROOT);
        for (T constant : type.getEnumConstants()) {
            if (((Enum<?>) constant).name().equals(wanted)) {
                return constant;
            }
        }
        List<String> names = java.util.Arrays.stream(type.getEnumConstants())
                .map(c -> ((Enum<?>) c).name().toLowerCase(Locale.ROOT).replace('_', '-')).toList();
        throw new IllegalArgumentException("must be one of " + names + " but was '" + text + "'");
    }

    private static String camel(String key) {
        StringBuilder out = new StringBuilder();
        boolean upper = false;
        for (char c : key.toCharArray()) {
            if (c == '-') {
                upper = true;
            } else {
                out.append(upper ? Character.toUpperCase(c) : c);
                upper = false;
            }
        }
        return out.toString();
    }
}
