package dev.idem.cli.letters;

import dev.idem.cli.CliException;
import dev.idem.core.DeadLetter;
import dev.idem.core.DeadLetterHeaders;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.rocketmq.client.consumer.DefaultMQPullConsumer;
import org.apache.rocketmq.client.consumer.PullResult;
import org.apache.rocketmq.client.consumer.PullStatus;
import org.apache.rocketmq.client.exception.MQClientException;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendCallback;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageConst;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;
import org.jspecify.annotations.Nullable;

/**
 * RocketMQ dead-letter topics ({@code <topic>_DLQ}, written by Idem's RocketMQ publisher). A scan
 * pulls every queue by offset, from its minimum to the maximum taken at the start, in chunks pulled
 * in parallel; nothing is committed. Entries are {@code <broker>:<queue>:<offset>}. Resent messages
 * keep body, tags, keys and user properties (without {@code idem-} ones) and go to the original
 * queue id where the topic has it.
 */
@SuppressWarnings("deprecation") // DefaultMQPullConsumer: the client's one API for pulling by offset.
public final class RocketMqDeadLetterTopic implements DeadLetterTopic {

    // Offsets per unit of parallel work, and messages per pull (the broker's default transfer cap).
    private static final int CHUNK = 2_048;
    private static final int PULL_BATCH = 32;
    private static final int PULL_THREADS = 8;
    private static final long PULL_TIMEOUT_MS = 10_000;
    private static final int PROBE_TIMEOUT_MS = 3_000;

    private final String nameServer;
    private final DefaultMQPullConsumer consumer;
    private volatile @Nullable DefaultMQProducer producer;

    /** Starts a pull consumer on {@code nameServer}; nothing is contacted until a command reads. */
    public RocketMqDeadLetterTopic(String nameServer) {
        this.nameServer = nameServer;
        String group = "idem-cli-" + UUID.randomUUID().toString().substring(0, 8);
        consumer = new DefaultMQPullConsumer(group);
        consumer.setNamesrvAddr(nameServer);
        consumer.setInstanceName(group);
        try {
            consumer.start();
        } catch (MQClientException e) {
            throw new CliException("cannot start a RocketMQ client for " + nameServer + ": " + e.getErrorMessage(), e);
        }
    }

    @Override
    public String broker() {
        return "rocketmq";
    }

    @Override
    public String entry(String text) {
        return parseEntry(text);
    }

    /** Checks and normalizes a RocketMQ entry without a connection; throws a {@link CliException} if wrong. */
    public static String parseEntry(String text) {
        String[] parts = text.split(":");
        if (parts.length != 3 || parts[0].isBlank() || !parts[1].matches("\\d+") || !parts[2].matches("\\d+")) {
            throw new CliException("a RocketMQ entry is <broker>:<queue>:<offset>, e.g. broker-a:0:17, not '" + text + "'");
        }
        try {
            return parts[0] + ":" + Integer.parseInt(parts[1]) + ":" + Long.parseLong(parts[2]);
        } catch (NumberFormatException e) {
            throw new CliException("a RocketMQ entry is <broker>:<queue>:<offset>, e.g. broker-a:0:17, not '" + text
                    + "' (too large)", e);
        }
    }

    @Override
    public Scan scan(String topic, LetterFilter filter) {
        long started = System.nanoTime();
        List<MessageQueue> queues = queues(topic);
        List<Chunk> chunks = new ArrayList<>();
        for (MessageQueue queue : queues) {
            long min = offset(queue, true);
            long max = offset(queue, false);
            for (long from = min; from < max; from += CHUNK) {
                chunks.add(new Chunk(queue, from, Math.min(max, from + CHUNK)));
            }
        }
        AtomicLong scanned = new AtomicLong();
        ExecutorService pool = Executors.newFixedThreadPool(PULL_THREADS, r -> {
            Thread thread = new Thread(r, "idem-cli-scan");
            thread.setDaemon(true);
            return thread;
        });
        try {
            List<Future<List<Letter>>> results = new ArrayList<>();
            for (Chunk chunk : chunks) {
                results.add(pool.submit(() -> pull(chunk, filter, scanned)));
            }
            List<Letter> letters = new ArrayList<>();
            for (Future<List<Letter>> result : results) {
                letters.addAll(result.get());
            }
            return new Scan(letters, scanned.get(), (System.nanoTime() - started) / 1_000_000);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof CliException cli ? cli
                    : new CliException("cannot read " + topic + " from RocketMQ at " + nameServer + ": " + e.getCause(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CliException("interrupted", e);
        } finally {
            pool.shutdownNow();
        }
    }

    private record Chunk(MessageQueue queue, long from, long to) {
    }

    private List<Letter> pull(Chunk chunk, LetterFilter filter, AtomicLong scanned) throws Exception {
        List<Letter> letters = new ArrayList<>();
        long offset = chunk.from();
        while (offset < chunk.to()) {
            int count = (int) Math.min(PULL_BATCH, chunk.to() - offset);
            PullResult result = consumer.pull(chunk.queue(), "*", offset, count, PULL_TIMEOUT_MS);
            if (result.getPullStatus() == PullStatus.FOUND) {
                for (MessageExt message : result.getMsgFoundList()) {
                    if (message.getQueueOffset() < chunk.to()) {
                        scanned.incrementAndGet();
                        Letter letter = letter(chunk.queue(), message, false);
                        if (filter.matches(letter)) {
                            letters.add(letter);
                        }
                    }
                }
            } else if (result.getPullStatus() == PullStatus.NO_NEW_MSG) {
                break;
            }
            if (result.getNextBeginOffset() <= offset) {
                break;
            }
            offset = result.getNextBeginOffset();
        }
        return letters;
    }

    @Override
    public Optional<Letter> read(String topic, String entry) {
        String[] parts = entry(entry).split(":");
        MessageQueue queue = new MessageQueue(topic, parts[0], Integer.parseInt(parts[1]));
        long offset = Long.parseLong(parts[2]);
        if (!queues(topic).contains(queue)) {
            return Optional.empty();
        }
        try {
            PullResult result = consumer.pull(queue, "*", offset, 1, PULL_TIMEOUT_MS);
            if (result.getPullStatus() != PullStatus.FOUND) {
                return Optional.empty();
            }
            return result.getMsgFoundList().stream().filter(m -> m.getQueueOffset() == offset).findFirst()
                    .map(m -> letter(queue, m, true));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CliException("interrupted", e);
        } catch (Exception e) {
            throw new CliException("cannot read " + topic + " " + entry + " from RocketMQ at " + nameServer + ": "
                    + e.getMessage(), e);
        }
    }

    private static Letter letter(MessageQueue queue, MessageExt message, boolean full) {
        List<Letter.Header> headers = new ArrayList<>();
        Map<String, String> idem = new LinkedHashMap<>();
        message.getProperties().forEach((name, value) -> {
            if (MessageConst.STRING_HASH_SET.contains(name) || value == null) {
                return;
            }
            if (DeadLetterHeaders.isIdemHeader(name)) {
                idem.put(name, value);
            } else {
                headers.add(new Letter.Header(name, value.getBytes(StandardCharsets.UTF_8)));
            }
        });
        headers.sort(Comparator.comparing(Letter.Header::name));
        String keys = message.getKeys();
        return new Letter(queue.getBrokerName() + ":" + queue.getQueueId() + ":" + message.getQueueOffset(),
                keys == null || keys.isEmpty() ? null : keys.getBytes(StandardCharsets.UTF_8), message.getBody(),
                headers, Letter.idemHeaders(idem, full), message.getTags(), keys,
                message.getStoreTimestamp() <= 0 ? null : Instant.ofEpochMilli(message.getStoreTimestamp()));
    }

    private List<MessageQueue> queues(String topic) {
        requireNameServer();
        try {
            Set<MessageQueue> queues = consumer.fetchSubscribeMessageQueues(topic);
            return queues.stream().sorted().toList();
        } catch (MQClientException e) {
            throw routeFailure(topic, e);
        }
    }

    /**
     * The client answers an unreachable name server and an unknown topic alike ("no route"): a TCP
     * connection to one of the name servers tells them apart.
     */
    private void requireNameServer() {
        for (String address : nameServer.split(";")) {
            int colon = address.lastIndexOf(':');
            if (colon < 0) {
                continue;
            }
            try (Socket socket = new Socket()) {
                socket.connect(new InetSocketAddress(address.substring(0, colon).trim(),
                        Integer.parseInt(address.substring(colon + 1).trim())), PROBE_TIMEOUT_MS);
                return;
            } catch (IOException | NumberFormatException e) {
                // Try the next name server.
            }
        }
        throw new CliException("cannot reach the RocketMQ name server at " + nameServer);
    }

    /** The name server answered (see {@link #requireNameServer}) but has no route: the topic is unknown. */
    private CliException routeFailure(String topic, MQClientException e) {
        return new CliException("topic " + topic + " does not exist on RocketMQ at " + nameServer, e);
    }

    private static String firstLine(String text) {
        if (text == null) {
            return "no answer";
        }
        int end = text.indexOf('\n');
        return end < 0 ? text : text.substring(0, end);
    }

    private long offset(MessageQueue queue, boolean min) {
        try {
            return min ? consumer.minOffset(queue) : consumer.maxOffset(queue);
        } catch (MQClientException e) {
            throw new CliException("cannot read the offsets of " + queue + " from RocketMQ at " + nameServer + ": "
                    + firstLine(e.getErrorMessage()), e);
        }
    }

    @Override
    public CompletableFuture<String> resend(Letter letter) {
        CompletableFuture<String> sent = new CompletableFuture<>();
        try {
            DefaultMQProducer producer = producer();
            List<MessageQueue> queues;
            try {
                queues = producer.fetchPublishMessageQueues(letter.originalTopic());
            } catch (MQClientException e) {
                throw new CliException("original topic " + letter.originalTopic() + " cannot be written: "
                        + firstLine(e.getErrorMessage()), e);
            }
            Message message = new Message(letter.originalTopic(), letter.value() == null ? new byte[0] : letter.value());
            if (letter.tags() != null && !letter.tags().isBlank()) {
                message.setTags(letter.tags());
            }
            if (letter.keys() != null && !letter.keys().isBlank()) {
                message.setKeys(letter.keys());
            }
            letter.replayHeaders().forEach(h -> message.putUserProperty(h.name(), new String(h.value(), StandardCharsets.UTF_8)));
            // The original queue id where the topic has it, so an orderly consumer keeps the key's order.
            MessageQueue target = queues.stream().filter(q -> q.getQueueId() == letter.originalPartition()).findFirst()
                    .orElse(queues.get(Math.floorMod(letter.entry().hashCode(), queues.size())));
            producer.send(message, (mqs, msg, arg) -> target, null, new SendCallback() {
                @Override
                public void onSuccess(SendResult result) {
                    if (result.getSendStatus() == SendStatus.SEND_OK) {
                        MessageQueue queue = result.getMessageQueue();
                        sent.complete(queue.getTopic() + "@" + queue.getBrokerName() + ":" + queue.getQueueId() + ":"
                                + result.getQueueOffset());
                    } else {
                        sent.completeExceptionally(new IllegalStateException("broker answered " + result.getSendStatus()));
                    }
                }

                @Override
                public void onException(Throwable failure) {
                    sent.completeExceptionally(failure);
                }
            });
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            sent.completeExceptionally(e);
        } catch (Exception e) {
            sent.completeExceptionally(e);
        }
        return sent;
    }

    private DefaultMQProducer producer() throws MQClientException {
        DefaultMQProducer current = producer;
        if (current == null) {
            synchronized (this) {
                if (producer == null) {
                    String group = "idem-cli-replay-" + UUID.randomUUID().toString().substring(0, 8);
                    DefaultMQProducer created = new DefaultMQProducer(group);
                    created.setNamesrvAddr(nameServer);
                    created.setInstanceName(group);
                    created.start();
                    producer = created;
                }
                current = producer;
            }
        }
        return current;
    }

    @Override
    public void close() {
        if (producer != null) {
            producer.shutdown();
        }
        consumer.shutdown();
    }
}
