package dev.idem.testkit.internal;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.concurrent.TimeUnit;
import org.apache.rocketmq.broker.BrokerController;
import org.apache.rocketmq.common.BrokerConfig;
import org.apache.rocketmq.common.namesrv.NamesrvConfig;
import org.apache.rocketmq.namesrv.NamesrvController;
import org.apache.rocketmq.remoting.netty.NettyClientConfig;
import org.apache.rocketmq.remoting.netty.NettyServerConfig;
import org.apache.rocketmq.store.config.MessageStoreConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A RocketMQ name server and one broker running in this JVM, as RocketMQ's own integration tests
 * run them. Shutdown is slow (~18 s), so it is started once per JVM and stopped in the background.
 */
final class EmbeddedRocketMq extends RocketMqTopics {

    private static final Logger LOG = LoggerFactory.getLogger(EmbeddedRocketMq.class);
    // RocketMQ has 18 delay levels; all at one second so retries in tests come back quickly.
    private static final String DELAY_LEVELS = String.join(" ", Collections.nCopies(18, "1s"));
    private static final int MIB = 1024 * 1024;
    // How long close() waits for the broker before leaving the rest of its shutdown to the JVM's exit.
    private static final long SHUTDOWN_WAIT_SECONDS = 5;

    private final String nameServerAddress;
    private final NamesrvController nameServer;
    private final BrokerController broker;

    private EmbeddedRocketMq(String nameServerAddress, NamesrvController nameServer, BrokerController broker)
            throws Exception {
        super(nameServerAddress);
        this.nameServerAddress = nameServerAddress;
        this.nameServer = nameServer;
        this.broker = broker;
    }

    static EmbeddedRocketMq start(Path workDir) {
        long started = System.nanoTime();
        try {
            Path dir = Files.createTempDirectory(Files.createDirectories(workDir.resolve("rocketmq")), "node-");
            int nameServerPort = Ports.free();
            NamesrvConfig namesrvConfig = new NamesrvConfig();
            namesrvConfig.setRocketmqHome(dir.toString());
            namesrvConfig.setKvConfigPath(dir.resolve("namesrv/kvConfig.json").toString());
            namesrvConfig.setConfigStorePath(dir.resolve("namesrv/namesrv.properties").toString());
            NettyServerConfig nameServerNetty = new NettyServerConfig();
            nameServerNetty.setListenPort(nameServerPort);
            NamesrvController nameServer = new NamesrvController(namesrvConfig, nameServerNetty);
            check(nameServer.initialize(), "name server");
            nameServer.start();
            String nameServerAddress = "127.0.0.1:" + nameServerPort;

            BrokerController broker = startBroker(dir, nameServerAddress);
            EmbeddedRocketMq rocketMq = new EmbeddedRocketMq(nameServerAddress, nameServer, broker);
            // Registration sometimes lags ~10 s; registering again after a moment removes the outliers.
            TimeUnit.MILLISECONDS.sleep(500);
            broker.registerBrokerAll(true, false, true);
            rocketMq.awaitBroker();
            LOG.info("RocketMQ started, name server {}, in {} ms", nameServerAddress,
                    (System.nanoTime() - started) / 1_000_000);
            return rocketMq;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted starting RocketMQ", e);
        } catch (Exception e) {
            throw new IllegalStateException("could not start the in-process RocketMQ broker", e);
        }
    }

    private static BrokerController startBroker(Path dir, String nameServerAddress) throws Exception {
        int port = brokerPort();
        BrokerConfig config = new BrokerConfig();
        config.setBrokerClusterName("idem-test-cluster");
        config.setBrokerName("idem-test-broker");
        config.setBrokerIP1("127.0.0.1");
        config.setNamesrvAddr(nameServerAddress);
        config.setListenPort(port);
        config.setEnablePropertyFilter(true);
        config.setRocketmqHome(dir.toString());

        MessageStoreConfig store = new MessageStoreConfig();
        store.setStorePathRootDir(dir.resolve("store").toString());
        store.setStorePathCommitLog(dir.resolve("store/commitlog").toString());
        // Small files: the defaults (1 GiB commit log) are meant for production disks.
        store.setMappedFileSizeCommitLog(64 * MIB);
        store.setMappedFileSizeConsumeQueue(300_000 * 20);
        store.setMaxIndexNum(100_000);
        store.setMaxHashSlotNum(10_000);
        store.setMappedFileSizeTimerLog(16 * MIB);
        store.setMessageDelayLevel(DELAY_LEVELS);
        store.setHaListenPort(Ports.free());

        NettyServerConfig netty = new NettyServerConfig();
        netty.setListenPort(port);
        BrokerController broker = new BrokerController(config, netty, new NettyClientConfig(), store);
        check(broker.initialize(), "broker");
        broker.start();
        return broker;
    }

    /** A free port whose "fast" neighbour (port - 2, RocketMQ's VIP channel) is free as well. */
    private static int brokerPort() {
        for (int i = 0; i < 50; i++) {
            int port = Ports.free();
            if (port > 1026 && Ports.isFree(port - 2)) {
                return port;
            }
        }
        throw new IllegalStateException("no free port pair for the RocketMQ broker");
    }

    private static void check(boolean initialized, String what) {
        if (!initialized) {
            throw new IllegalStateException("RocketMQ " + what + " failed to initialize");
        }
    }

    @Override
    public String nameServerAddress() {
        return nameServerAddress;
    }

    @Override
    public void close() throws Exception {
        super.close();
        Thread stopper = new Thread(() -> {
            broker.shutdown();
            nameServer.shutdown();
        }, "idem-testkit-rocketmq-shutdown");
        stopper.setDaemon(true);
        stopper.start();
        stopper.join(TimeUnit.SECONDS.toMillis(SHUTDOWN_WAIT_SECONDS));
    }
}
