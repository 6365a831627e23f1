package dev.idem.spring.internal.rocketmq;

import dev.idem.core.DeadLetterRouting;
import dev.idem.core.Delivery;
import dev.idem.core.IdemConsumer;
import dev.idem.core.IdempotentProcessor;
import dev.idem.core.PayloadCodec;
import dev.idem.core.ProcessorComposer;
import dev.idem.listener.ListenerHandler;
import dev.idem.listener.ListenerProcessors;
import dev.idem.listener.ListenerSetting;
import dev.idem.listener.ListenerSpec;
import dev.idem.rocketmq.DelayLevels;
import dev.idem.rocketmq.IdemConcurrentlyListener;
import dev.idem.rocketmq.IdemOrderlyListener;
import dev.idem.rocketmq.PushConsumerRules;
import dev.idem.rocketmq.RocketMqDeadLetterPublisher;
import dev.idem.spring.Broker;
import dev.idem.spring.Idempotent;
import dev.idem.spring.internal.ListenerMethods;
import dev.idem.spring.internal.ListenerPlans;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.spring.annotation.ConsumeMode;
import org.apache.rocketmq.spring.support.DefaultRocketMQListenerContainer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ListableBeanFactory;

/**
 * Puts Idem around the rocketmq-spring containers of {@link Idempotent} listeners before they start:
 * finds each container by its listener bean, and registers Idem's RocketMQ listener on its push
 * consumer, which claims each call's messages in one round trip and calls the container's own
 * {@code handleMessage} (conversion, the listener) for each message it runs, in the ledger's
 * transaction. Broadcasting is refused; the consumer's {@code maxReconsumeTimes} is raised to leave
 * Idem the dead-letter decision. Loaded only when an application has such listeners.
 */
public final class RocketMqListenerWrapping {

    private static final Logger LOG = LoggerFactory.getLogger(RocketMqListenerWrapping.class);

    private final ListableBeanFactory beans;
    private final Map<String, DefaultRocketMQListenerContainer> byName = new LinkedHashMap<>();
    private final List<AutoCloseable> closing = new ArrayList<>();

    public RocketMqListenerWrapping(ListableBeanFactory beans) {
        this.beans = beans;
    }

    /** Each wrapped listener's plan, its container found; nothing is changed yet. */
    public List<ListenerSpec> plans(List<ListenerMethods.Found<Idempotent>> methods, ListenerPlans plans) {
        List<ListenerSpec> planned = new ArrayList<>();
        for (ListenerMethods.Found<Idempotent> method : methods) {
            String where = method.method().getDeclaringClass().getName() + "." + method.method().getName();
            if (!method.method().getName().equals("onMessage")) {
                throw new IllegalStateException("@Idempotent on " + where + ": on a @RocketMQMessageListener bean it "
                        + "goes on onMessage, the method the container calls");
            }
            DefaultRocketMQListenerContainer container = beans.getBeansOfType(DefaultRocketMQListenerContainer.class)
                    .values().stream().filter(c -> target(c.getRocketMQListener()) == target(method.bean())).findFirst()
                    .orElseThrow(() -> new IllegalStateException("@Idempotent on " + where + ": no rocketmq-spring "
                            + "container runs this bean as a RocketMQListener (a RocketMQReplyListener is not wrapped)"));
            ListenerSpec plan = plans.wrappedPlan(method, Broker.ROCKETMQ,
                    container.getConsumerGroup() + "-" + container.getTopic(), container.getTopic(),
                    container.getConsumerGroup(), bytes(), new Call(container));
            byName.put(plan.name(), container);
            planned.add(plan);
        }
        return planned;
    }

    /** Whether {@code plan} is a wrapped RocketMQ listener's. */
    public boolean wraps(ListenerSpec plan) {
        return byName.containsKey(plan.name());
    }

    /** Builds the listener's processor and registers Idem as its consumer's listener. */
    public void wrap(ListenerSpec plan, IdempotentProcessor.Builder<Object> processor) {
        DefaultRocketMQListenerContainer container = Objects.requireNonNull(byName.get(plan.name()),
                "a listener this wraps");
        DefaultMQPushConsumer consumer = container.getConsumer();
        boolean orderly = container.getConsumeMode() == ConsumeMode.ORDERLY;
        String settings = "@RocketMQMessageListener on " + plan.where() + " (idem.listeners." + plan.name() + ")";
        // rocketmq-spring's container stops the consumer first (phase MAX); its running handlers get
        // this long before they are interrupted, and need Idem's lease renewal until then.
        long closeMillis = plan.get(ListenerSetting.CLOSE_TIMEOUT).orElse(IdemConsumer.DEFAULT_CLOSE_TIMEOUT).toMillis();
        if (consumer.getAwaitTerminationMillisWhenShutdown() < closeMillis) {
            consumer.setAwaitTerminationMillisWhenShutdown(closeMillis);
        }
        DeadLetterRouting routing = ListenerProcessors.deadLetterRouting(plan).orElse(DeadLetterRouting.ROCKETMQ_DEFAULT);
        ProcessorComposer.Composed<Object> composed;
        try {
            PushConsumerRules.requireClustering(consumer);
            composed = ProcessorComposer.forConsumer("group", consumer.getConsumerGroup())
                    .ownPublisher(() -> RocketMqDeadLetterPublisher.start(consumer, routing))
                    .limits(limits -> raiseReconsumeTimes(plan, consumer, orderly, limits.maxAttempts()))
                    .compose(processor);
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException(settings + ": " + e.getMessage(), e);
        }
        closing.add(composed::close);
        IdempotentProcessor<Object> built = composed.processor();
        consumer.registerMessageListener(orderly ? IdemOrderlyListener.of(built, PushConsumerRules.maxStall(consumer))
                : IdemConcurrentlyListener.of(built, DelayLevels.defaults(), PushConsumerRules.maxStall(consumer)));
        LOG.info("Idem wraps @RocketMQMessageListener {} as '{}' (group {}, {})", plan.where(), plan.name(),
                plan.group(), orderly ? "orderly" : "concurrently");
    }

    /** Raises the container's redeliveries to what Idem's attempts need: Idem, not the broker, decides the dead letter. */
    private static void raiseReconsumeTimes(ListenerSpec plan, DefaultMQPushConsumer consumer, boolean orderly,
                                            int maxAttempts) {
        int configured = consumer.getMaxReconsumeTimes();
        PushConsumerRules.raiseReconsumeTimes(consumer, orderly, maxAttempts).ifPresent(raised ->
                LOG.info("Idem listener '{}': maxReconsumeTimes {} raised to {} (Idem decides the dead letter)",
                        plan.name(), configured, raised));
    }

    /** Closes the processors, then the dead-letter producers, after the containers stopped. */
    public void close() {
        for (AutoCloseable c : closing) {
            try {
                c.close();
            } catch (Exception e) {
                LOG.warn("closing an Idem wrapped RocketMQ listener's processor failed", e);
            }
        }
        closing.clear();
    }

    /** The object behind any proxies: rocketmq-spring may hold the bean before or after its advice. */
    private static @Nullable Object target(@Nullable Object bean) {
        Object current = bean;
        while (current instanceof org.springframework.aop.framework.Advised) {
            Object next = org.springframework.aop.framework.AopProxyUtils.getSingletonTarget(current);
            if (next == null) {
                break;
            }
            current = next;
        }
        return current;
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static PayloadCodec<Object> bytes() {
        return (PayloadCodec) PayloadCodec.bytes();
    }

    /** Runs a message as rocketmq-spring would: converted to the listener's type, then the listener. */
    private record Call(DefaultRocketMQListenerContainer container) implements ListenerHandler {
        @Override
        public void invoke(Delivery<Object> delivery, @Nullable Connection tx) throws Exception {
            container.handleMessage(delivery.envelope().source(MessageExt.class).orElseThrow(
                    () -> new IllegalStateException(delivery.envelope().messageId() + " carries no RocketMQ message")));
        }
    }
}
