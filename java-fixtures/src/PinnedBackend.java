import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The pinning part of the server fixtures (TomcatPinned, HttpServerPinned): a small backend on a
 * platform thread (a loopback ServerSocket on an ephemeral port that answers each line after
 * sleeping backendMs), and one shared Client whose synchronized call() writes a line to it and
 * reads the answer: about backendMs of real socket I/O holding the Client's monitor. A virtual
 * thread in call() parks in the socket read with the monitor held (a MONITOR pin on JDK 21-23),
 * and the requests queued behind it block entering the monitor (MONITOR_ENTER). Each call() is
 * one hold of the one monitor; holds() counts them.
 *
 * Also the load (platform threads sending plain HTTP/1.1 requests, so the load itself never
 * pins) and the go file the tests create once vtpin is attached and the collector tracks the
 * carriers.
 */
public final class PinnedBackend implements AutoCloseable {

    /** The shared client of the backend: every request's call() holds its monitor for one round trip. */
    public static final class Client {
        private final Socket socket;
        private final BufferedReader in;
        private final Writer out;
        private final AtomicInteger holds = new AtomicInteger();

        Client(int port) throws IOException {
            socket = new Socket(InetAddress.getLoopbackAddress(), port);
            socket.setTcpNoDelay(true);
            in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
            out = new OutputStreamWriter(socket.getOutputStream(), StandardCharsets.UTF_8);
        }

        /** One round trip to the backend with this object's monitor held (~backendMs in the socket read). */
        public synchronized String call(String what) throws IOException {
            holds.incrementAndGet();
            out.write(what + "\n");
            out.flush();
            String answer = in.readLine();
            if (answer == null) throw new IOException("the backend closed the connection");
            return answer;
        }

        public int holds() {
            return holds.get();
        }
    }

    private final ServerSocket server;
    private final Thread acceptor;
    public final Client client;

    public PinnedBackend(long backendMs) throws IOException {
        server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        acceptor = new Thread(() -> serve(backendMs), "pinned-backend");
        acceptor.setDaemon(true);
        acceptor.start();
        client = new Client(server.getLocalPort());
    }

    private void serve(long backendMs) {
        try (Socket s = server.accept()) {
            s.setTcpNoDelay(true);
            BufferedReader in = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.UTF_8));
            Writer out = new OutputStreamWriter(s.getOutputStream(), StandardCharsets.UTF_8);
            for (String line; (line = in.readLine()) != null; ) {
                Thread.sleep(backendMs);
                out.write("ok " + line + "\n");
                out.flush();
            }
        } catch (IOException | InterruptedException e) {
            if (!server.isClosed()) e.printStackTrace();
        }
    }

    public int port() {
        return server.getLocalPort();
    }

    @Override
    public void close() throws IOException {
        server.close();
    }

    /** Spins on CPU for ms (a warm-up request's work: the carriers start and stay). */
    public static long spin(long ms) {
        long end = System.nanoTime() + ms * 1_000_000L, x = 1;
        while (System.nanoTime() < end) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
        }
        return x;
    }

    /** Waits for go (a path, or "-" for none) to exist. */
    public static void awaitGo(String go) throws InterruptedException {
        if (go == null || go.equals("-")) return;
        Path p = Path.of(go);
        while (!Files.exists(p)) Thread.sleep(20);
    }

    /**
     * Sends requests GETs of path to the HTTP server on port from clients platform threads
     * (a connection each, Connection: close), and fails unless every answer is a 200.
     */
    public static void load(int port, String path, int requests, int clients) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(clients);
        try {
            List<Future<String>> answers = new ArrayList<>();
            for (int i = 0; i < requests; i++) {
                final int n = i;
                answers.add(pool.submit(() -> get(port, path + "?n=" + n)));
            }
            for (Future<String> f : answers) {
                String status = f.get();
                if (!status.startsWith("HTTP/1.1 200")) throw new IllegalStateException("answered " + status);
            }
        } finally {
            pool.shutdown();
        }
    }

    private static String get(int port, String target) throws IOException {
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
            OutputStream out = s.getOutputStream();
            out.write(("GET " + target + " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = s.getInputStream();
            String all = new String(in.readAllBytes(), StandardCharsets.ISO_8859_1);
            int eol = all.indexOf("\r\n");
            return eol < 0 ? all : all.substring(0, eol);
        }
    }
}
