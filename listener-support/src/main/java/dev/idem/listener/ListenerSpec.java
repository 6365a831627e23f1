package dev.idem.listener;

import dev.idem.core.Compensation;
import dev.idem.core.KeySource;
import dev.idem.core.PayloadCodec;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * One listener as its framework resolved it: its name, broker, topic and group, how its payload is
 * decoded and keyed, what runs it, its compensation, whether it runs on the ledger, and the settings
 * its annotation and properties set, each with where it was set. A setting not set keeps the builder's
 * default. Built once per listener before anything starts; immutable.
 */
public final class ListenerSpec {

    private final String name;
    private final String where;
    private final ListenerBroker broker;
    private final String topic;
    private final String group;
    private final @Nullable String wrappedBecause;
    private final PayloadCodec<Object> codec;
    private final KeySource<Object> keys;
    private final ListenerHandler handler;
    private final @Nullable Compensation compensation;
    private final boolean ledger;
    private final Map<ListenerSetting<?>, Value> values;

    private record Value(Object value, String origin) {
    }

    private ListenerSpec(Builder b) {
        this.name = b.name;
        this.where = b.where;
        this.broker = b.broker;
        this.topic = Objects.requireNonNull(b.topic, "topic");
        this.group = Objects.requireNonNull(b.group, "group");
        this.wrappedBecause = b.wrappedBecause;
        this.codec = Objects.requireNonNull(b.codec, "codec");
        this.keys = Objects.requireNonNull(b.keys, "keys");
        this.handler = Objects.requireNonNull(b.handler, "handler");
        this.compensation = b.compensation;
        this.ledger = b.ledger;
        this.values = Map.copyOf(b.values);
    }

    /**
     * A listener named {@code name} (unique, in configuration and metrics), declared at {@code where}
     * (a method, for messages), on {@code broker}.
     */
    public static Builder builder(String name, String where, ListenerBroker broker) {
        return new Builder(name, where, broker);
    }

    public String name() {
        return name;
    }

    /** The method or bean that declared it, for messages. */
    public String where() {
        return where;
    }

    public ListenerBroker broker() {
        return broker;
    }

    public String topic() {
        return topic;
    }

    public String group() {
        return group;
    }

    /** Whether Idem wraps a framework's listener (its consumer is the framework's) rather than running its own. */
    public boolean wrapped() {
        return wrappedBecause != null;
    }

    public PayloadCodec<Object> codec() {
        return codec;
    }

    public KeySource<Object> keys() {
        return keys;
    }

    public ListenerHandler handler() {
        return handler;
    }

    public @Nullable Compensation compensation() {
        return compensation;
    }

    /** Whether the listener wants the ledger as its business check (when the application has one). */
    public boolean ledger() {
        return ledger;
    }

    /** The setting's value, when the annotation or the properties set it. */
    public <T> Optional<T> get(ListenerSetting<T> setting) {
        Value value = values.get(setting);
        return value == null ? Optional.empty() : Optional.of(setting.type().cast(value.value()));
    }

    /** Where the setting's value came from, or its property when it is unset. */
    public String origin(ListenerSetting<?> setting) {
        Value value = values.get(setting);
        return value != null ? value.origin() : settings() + "." + setting.key();
    }

    /** The listener's section of properties, {@code idem.listeners.<name>}. */
    public String settings() {
        return "idem.listeners." + name;
    }

    /** The same listener with another compensation (an {@code @IdempotentCompensation} method). */
    public ListenerSpec withCompensation(Compensation compensation) {
        Builder b = new Builder(name, where, broker);
        b.topic = topic;
        b.group = group;
        b.wrappedBecause = wrappedBecause;
        b.codec = codec;
        b.keys = keys;
        b.handler = handler;
        b.compensation = compensation;
        b.ledger = ledger;
        b.values.putAll(values);
        return new ListenerSpec(b);
    }

    /**
     * Says a failure of the listener's set-up (a builder refusing a setting): the listener, the
     * settings it may come from and the builder's reason.
     */
    public String failure(IllegalArgumentException e) {
        return "Idem listener '" + name + "' (" + broker.clientSettings() + ", " + settings() + ", " + where + "): "
                + e.getMessage();
    }

    @Override
    public String toString() {
        return "listener '" + name + "' (" + topic + " as " + group + " on " + broker + ")";
    }

    /** Collects a listener; later {@code set} calls of a setting override earlier ones (properties over annotation). */
    public static final class Builder {
        private final String name;
        private final String where;
        private final ListenerBroker broker;
        private @Nullable String topic;
        private @Nullable String group;
        private @Nullable String wrappedBecause;
        private @Nullable PayloadCodec<Object> codec;
        private @Nullable KeySource<Object> keys;
        private @Nullable ListenerHandler handler;
        private @Nullable Compensation compensation;
        private boolean ledger = true;
        private final Map<ListenerSetting<?>, Value> values = new LinkedHashMap<>();

        private Builder(String name, String where, ListenerBroker broker) {
            this.name = Objects.requireNonNull(name, "name");
            this.where = Objects.requireNonNull(where, "where");
            this.broker = Objects.requireNonNull(broker, "broker");
        }

        public Builder topic(String topic) {
            this.topic = topic;
            return this;
        }

        public Builder group(String group) {
            this.group = group;
            return this;
        }

        /**
         * Idem wraps a framework's listener, whose consumer is the framework's: settings of Idem's own
         * consumers are refused with {@code because} ({@code its threads are its container's}).
         */
        public Builder wrapped(String because) {
            this.wrappedBecause = because;
            return this;
        }

        public Builder codec(PayloadCodec<Object> codec) {
            this.codec = codec;
            return this;
        }

        public Builder keys(KeySource<Object> keys) {
            this.keys = keys;
            return this;
        }

        public Builder handler(ListenerHandler handler) {
            this.handler = handler;
            return this;
        }

        public Builder compensation(@Nullable Compensation compensation) {
            this.compensation = compensation;
            return this;
        }

        /** Whether the listener wants the ledger as its business check. Default true. */
        public Builder ledger(boolean ledger) {
            this.ledger = ledger;
            return this;
        }

        /**
         * Sets {@code setting} from {@code origin} (a property, an annotation member on a method).
         *
         * @throws IllegalArgumentException naming the origin, when the listener does not take the setting
         */
        public <T> Builder set(ListenerSetting<T> setting, T value, String origin) {
            boolean isWrapped = wrappedBecause != null;
            if (!setting.scope().takenBy(broker, isWrapped)) {
                throw new IllegalArgumentException(origin + (isWrapped && setting.scope() == ListenerSetting.Scope.OWN_CONSUMER
                        ? " is not a setting of a wrapped listener (" + wrappedBecause + ")"
                        : isWrapped ? " is a setting of Idem's own " + brokerOf(setting) + " consumer, not of a wrapped listener"
                        : " is a setting of " + brokerOf(setting) + " listeners, and this listener consumes from "
                        + broker.display()));
            }
            try {
                setting.check(value);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(origin + " " + e.getMessage(), e);
            }
            values.put(setting, new Value(setting.type().cast(Objects.requireNonNull(value, "value")), origin));
            return this;
        }

        /**
         * Sets {@code setting} from its text (see {@link ListenerSetting#parse}).
         *
         * @throws IllegalArgumentException naming the origin, when the text is not a value of the setting
         */
        public <T> Builder setText(ListenerSetting<T> setting, String text, String origin) {
            T value;
            try {
                value = setting.parse(text);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(origin + " " + e.getMessage(), e);
            }
            return set(setting, value, origin);
        }

        /**
         * Sets every setting {@code annotation} carries as a member of the setting's
         * {@linkplain ListenerSetting#member() name}: {@code member} gives a member's text, placeholders
         * resolved, or empty when the annotation has no such member. A member left at its default, empty
         * or a whole number's {@code 0}, leaves the setting unset.
         *
         * @param annotation the annotation's name, {@code @IdempotentListener}, for messages
         * @throws IllegalArgumentException naming the member when its text is not a value of the setting
         */
        public Builder annotated(String annotation, Function<String, Optional<String>> member) {
            for (ListenerSetting<?> setting : ListenerSetting.all()) {
                member.apply(setting.member()).filter(text -> !text.isEmpty()
                        && !(setting.type() == Integer.class && "0".equals(text.trim()))).ifPresent(text ->
                        setText(setting, text, annotation + "(" + setting.member() + ") on " + where));
            }
            return this;
        }

        /**
         * Sets every setting the listener's properties set, over the annotation's: {@code text} gives the
         * text of a key under {@code idem.listeners.<name>} ({@code max-deferral}), or empty.
         *
         * @throws IllegalArgumentException naming the property when it is not a value of the setting, or a
         *                                  setting this listener does not take
         */
        public Builder configured(Function<String, Optional<String>> text) {
            for (ListenerSetting<?> setting : ListenerSetting.all()) {
                text.apply(setting.key()).ifPresent(value -> setText(setting, value, property(setting)));
            }
            return this;
        }

        /**
         * As {@link #configured}, from properties a framework has bound to their types already:
         * {@code value} gives a setting's value, of its {@linkplain ListenerSetting#type() type}, or empty.
         */
        public Builder configuredValues(Function<ListenerSetting<?>, Optional<?>> value) {
            for (ListenerSetting<?> setting : ListenerSetting.all()) {
                value.apply(setting).ifPresent(v -> setValue(setting, v));
            }
            return this;
        }

        private <T> void setValue(ListenerSetting<T> setting, Object value) {
            set(setting, setting.type().cast(value), property(setting));
        }

        private String property(ListenerSetting<?> setting) {
            return "idem.listeners." + name + "." + setting.key();
        }

        /** @throws NullPointerException naming what is missing (topic, group, codec, keys, handler) */
        public ListenerSpec build() {
            return new ListenerSpec(this);
        }

        private static String brokerOf(ListenerSetting<?> setting) {
            return switch (setting.scope()) {
                case KAFKA -> ListenerBroker.KAFKA.display();
                case KAFKA_SHARE -> ListenerBroker.KAFKA_SHARE.display();
                default -> ListenerBroker.ROCKETMQ.display();
            };
        }
    }
}
