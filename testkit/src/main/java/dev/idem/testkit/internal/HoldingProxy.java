package dev.idem.testkit.internal;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A loopback TCP forwarder whose downstream direction can be held: from {@link #hold()} on, what the
 * upstream server sends is read and dropped, as a network that loses it would. A replica that
 * replicates through it then misses the primary's last writes. Internal to the test kit.
 */
public final class HoldingProxy implements AutoCloseable {

    private final ServerSocket server;
    private final int upstreamPort;
    private final AtomicBoolean held = new AtomicBoolean();
    private final AtomicLong dropped = new AtomicLong();
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();

    private HoldingProxy(ServerSocket server, int upstreamPort) {
        this.server = server;
        this.upstreamPort = upstreamPort;
    }

    /** Listens on a free loopback port and forwards each connection to {@code upstreamPort}. */
    public static HoldingProxy to(int upstreamPort) {
        try {
            HoldingProxy proxy = new HoldingProxy(new ServerSocket(0, 50, InetAddress.getLoopbackAddress()),
                    upstreamPort);
            Thread accept = new Thread(proxy::accept, "holding-proxy-" + upstreamPort);
            accept.setDaemon(true);
            accept.start();
            return proxy;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot listen for a proxy to port " + upstreamPort, e);
        }
    }

    /** The port clients connect to. */
    public int port() {
        return server.getLocalPort();
    }

    /** From now on, drops what the upstream sends instead of forwarding it. */
    public void hold() {
        held.set(true);
    }

    /** Bytes the upstream sent that were dropped since {@link #hold()}. */
    public long droppedBytes() {
        return dropped.get();
    }

    private void accept() {
        while (!server.isClosed()) {
            try {
                Socket client = server.accept();
                sockets.add(client);
                if (server.isClosed()) {
                    closeQuietly(client);
                    return;
                }
                try {
                    Socket upstream = new Socket(InetAddress.getLoopbackAddress(), upstreamPort);
                    sockets.add(upstream);
                    pump(client, upstream, false);
                    pump(upstream, client, true);
                } catch (IOException upstreamGone) {
                    closeQuietly(client);
                }
            } catch (IOException e) {
                // the proxy was closed
            }
        }
    }

    private void pump(Socket from, Socket to, boolean downstream) {
        Thread thread = new Thread(() -> {
            byte[] buffer = new byte[16 * 1024];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                int read;
                while ((read = in.read(buffer)) >= 0) {
                    if (downstream && held.get()) {
                        dropped.addAndGet(read);
                    } else {
                        out.write(buffer, 0, read);
                        out.flush();
                    }
                }
            } catch (IOException e) {
                // one side closed
            } finally {
                closeQuietly(from);
                closeQuietly(to);
            }
        }, "holding-proxy-pump-" + upstreamPort);
        thread.setDaemon(true);
        thread.start();
    }

    private static void closeQuietly(Socket socket) {
        try {
            socket.close();
        } catch (IOException e) {
            // already closed
        }
    }

    @Override
    public void close() {
        try {
            server.close();
        } catch (IOException e) {
            // already closed
        }
        sockets.forEach(HoldingProxy::closeQuietly);
    }
}
