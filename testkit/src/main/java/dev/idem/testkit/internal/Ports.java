package dev.idem.testkit.internal;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;

/** Free loopback ports. Internal to the test kit. */
public final class Ports {

    private Ports() {
    }

    /** A port nothing listens on right now (another process may still take it before we do). */
    public static int free() {
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
}
