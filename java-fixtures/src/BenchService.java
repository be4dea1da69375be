import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A service-like workload: the JDK's HttpServer on loopback (port 0) with a
 * virtual thread per request, and a loopback HTTP/1.1 keep-alive client on
 * `concurrency` platform threads in the same JVM.
 *
 * Each request: SHA-256 over `work` bytes (CPU), Thread.sleep(sleepMs) (a short
 * blocking wait), a round trip through a BlockingQueue to a pool of backend
 * virtual threads (a second blocking wait: the handler parks in poll), then a
 * 1 KB response over the socket.
 *
 * usage: BenchService [requests=20000] [concurrency=16] [warmup=4000] [work=4096]
 *                     [sleepMs=1] [backends=4] [response=1024]
 * prints: BENCH workload=service elapsed_ns=<measured requests> cpu_ns=<process CPU in it> requests=.. rps=..
 *         p50_us=.. p99_us=.. (client-side request latency)
 */
public class BenchService {

    record Job(byte[] digest, SynchronousQueue<byte[]> reply) {}

    static final BlockingQueue<Job> JOBS = new ArrayBlockingQueue<>(1024);

    static int work, sleepMs, responseSize;

    static void handle(HttpExchange ex) throws IOException {
        try (ex) {
            try (InputStream in = ex.getRequestBody()) {
                in.readAllBytes();
            }
            String q = ex.getRequestURI().getRawQuery();
            long seed = q == null ? 1 : q.hashCode();
            byte[] buf = new byte[work];
            for (int i = 0; i < buf.length; i += 8) buf[i] = (byte) (seed >>> (i & 31));
            MessageDigest md = MessageDigest.getInstance("SHA-256");
            byte[] digest = md.digest(buf);
            if (sleepMs > 0) Thread.sleep(sleepMs);
            SynchronousQueue<byte[]> reply = new SynchronousQueue<>();
            JOBS.put(new Job(digest, reply));
            byte[] answer = reply.poll(5, TimeUnit.SECONDS);
            if (answer == null) throw new IOException("backend timed out");
            byte[] body = new byte[responseSize];
            for (int i = 0; i < body.length; i++) body[i] = answer[i % answer.length];
            ex.getResponseHeaders().set("Content-Type", "application/octet-stream");
            ex.sendResponseHeaders(200, body.length);
            try (OutputStream out = ex.getResponseBody()) {
                out.write(body);
            }
        } catch (Exception e) {
            if (e instanceof InterruptedException) Thread.currentThread().interrupt();
            ex.sendResponseHeaders(500, -1);
        }
    }

    static void backend() {
        try {
            MessageDigest md = MessageDigest.getInstance("SHA-256");
            while (true) {
                Job j = JOBS.take();
                md.update(j.digest());
                j.reply().put(md.digest());
            }
        } catch (InterruptedException e) {
            // shutdown
        } catch (Exception e) {
            throw new RuntimeException(e);
        }
    }

    /** One keep-alive connection on a platform thread; returns the requests done. */
    static void client(int port, AtomicInteger remaining, long[] latencies, AtomicInteger slot) throws IOException {
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
            s.setTcpNoDelay(true);
            OutputStream out = s.getOutputStream();
            InputStream in = new BufferedInputStream(s.getInputStream(), 16384);
            int n;
            while ((n = remaining.getAndDecrement()) > 0) {
                byte[] req = ("GET /work?i=" + n + " HTTP/1.1\r\nHost: localhost\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII);
                long t0 = System.nanoTime();
                out.write(req);
                out.flush();
                int status = readResponse(in);
                long dt = System.nanoTime() - t0;
                if (status != 200) throw new IOException("HTTP status " + status);
                int i = slot.getAndIncrement();
                if (latencies != null && i < latencies.length) latencies[i] = dt;
            }
        }
    }

    /** Reads one response (status line, headers, Content-Length body); returns the status. */
    static int readResponse(InputStream in) throws IOException {
        StringBuilder line = new StringBuilder();
        int status = -1;
        long length = -1;
        boolean first = true;
        while (true) {
            line.setLength(0);
            int c;
            while ((c = in.read()) != '\n') {
                if (c < 0) throw new IOException("connection closed");
                if (c != '\r') line.append((char) c);
            }
            if (line.length() == 0) break;
            String l = line.toString();
            if (first) {
                status = Integer.parseInt(l.substring(9, 12));
                first = false;
            } else if (l.regionMatches(true, 0, "content-length:", 0, 15)) {
                length = Long.parseLong(l.substring(15).trim());
            }
        }
        if (length < 0) throw new IOException("no Content-Length");
        long left = length;
        byte[] sink = new byte[4096];
        while (left > 0) {
            int r = in.read(sink, 0, (int) Math.min(sink.length, left));
            if (r < 0) throw new IOException("connection closed in body");
            left -= r;
        }
        return status;
    }

    static long phase(int port, int requests, int concurrency, long[] latencies) throws Exception {
        AtomicInteger remaining = new AtomicInteger(requests);
        AtomicInteger slot = new AtomicInteger();
        CountDownLatch done = new CountDownLatch(concurrency);
        Throwable[] failure = new Throwable[1];
        long t0 = System.nanoTime();
        for (int c = 0; c < concurrency; c++) {
            Thread.ofPlatform().daemon().name("client-" + c).start(() -> {
                try {
                    client(port, remaining, latencies, slot);
                } catch (Throwable e) {
                    synchronized (failure) { failure[0] = e; }
                    remaining.set(0);
                } finally {
                    done.countDown();
                }
            });
        }
        done.await();
        long ns = System.nanoTime() - t0;
        if (failure[0] != null) throw new RuntimeException("client failed", failure[0]);
        return ns;
    }

    public static void main(String[] args) throws Exception {
        BenchArgs a = new BenchArgs("BenchService", args, "requests", "concurrency", "warmup", "work",
            "sleepMs", "backends", "response");
        int requests = a.integer("requests", 20_000);
        int concurrency = a.integer("concurrency", 16);
        int warmup = a.integer("warmup", 4_000);
        work = a.integer("work", 4096);
        sleepMs = a.integer("sleepMs", 1);
        responseSize = a.integer("response", 1024);
        int backends = a.integer("backends", 4);
        System.out.println("java.version = " + System.getProperty("java.version"));
        // Headers and body go out in separate writes: without TCP_NODELAY on the server
        // side, Nagle + delayed ACK add 40 ms per keep-alive request on JDK 21.
        System.setProperty("sun.net.httpserver.nodelay", "true");

        HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 1024);
        ExecutorService perRequest = Executors.newVirtualThreadPerTaskExecutor();
        server.setExecutor(perRequest);
        server.createContext("/work", BenchService::handle);
        server.start();
        Thread[] backendThreads = new Thread[backends];
        for (int i = 0; i < backends; i++)
            backendThreads[i] = Thread.ofVirtual().name("backend-" + i).start(BenchService::backend);
        int port = server.getAddress().getPort();

        phase(port, warmup, concurrency, null);
        long[] lat = new long[requests];
        long cpu0 = BenchArgs.cpuNs();
        long ns = phase(port, requests, concurrency, lat);
        long cpu = BenchArgs.cpuNs() - cpu0;

        server.stop(0);
        for (Thread t : backendThreads) t.interrupt();
        perRequest.shutdown();

        Arrays.sort(lat);
        long p50 = lat[lat.length / 2] / 1000, p99 = lat[(int) (lat.length * 0.99)] / 1000;
        BenchArgs.report("service", ns, cpu, "requests=" + requests + " concurrency=" + concurrency
            + " rps=" + (long) (requests / (ns / 1e9)) + " p50_us=" + p50 + " p99_us=" + p99);
    }
}
