package dev.idem.testkit.internal;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.ThreadLocalRandom;

/** Free loopback ports. Internal to the test kit. */
public final class Ports {

    // Below the kernel's ephemeral range: a port from that range can be taken by any outgoing
    // connection between the probe and the listener's bind (a RocketMQ broker failed to bind so).
    private static final int LOWEST = 15_000;
    private static final int EPHEMERAL_FROM = ephemeralFrom();

    private Ports() {
    }

    /**
     * A port nothing listens on right now, on loopback or on every address (another process may
     * still take it before we do), outside the ephemeral range where it can be.
     */
    public static int free() {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        for (int i = 0; i < 100 && EPHEMERAL_FROM > LOWEST + 1_000; i++) {
            int port = random.nextInt(LOWEST, EPHEMERAL_FROM);
            if (isFree(port) && isFreeOnEveryAddress(port)) {
                return port;
            }
        }
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            socket.setReuseAddress(true);
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException("no free loopback port", e);
        }
    }

    /** Whether {@code port} is free on loopback. */
    public static boolean isFree(int port) {
        try (ServerSocket socket = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
            socket.setReuseAddress(true);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    private static boolean isFreeOnEveryAddress(int port) {
        try (ServerSocket socket = new ServerSocket()) {
            socket.setReuseAddress(true);
            socket.bind(new InetSocketAddress(port), 1);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    private static int ephemeralFrom() {
        try {
            return Integer.parseInt(Files.readString(Path.of("/proc/sys/net/ipv4/ip_local_port_range")).trim()
                    .split("\\s+")[0]);
        } catch (IOException | RuntimeException e) {
            return 32_768;   // Linux's default
        }
    }
}
