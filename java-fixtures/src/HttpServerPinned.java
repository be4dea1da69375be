import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * The JDK's HttpServer on a virtual-thread-per-task executor; /pin calls the shared
 * PinnedBackend.Client, whose synchronized call() does ~backendMs of socket I/O (a MONITOR
 * pin per request on JDK 21-23, the requests queued behind it MONITOR_ENTER). /warm spins
 * 20 ms on CPU and touches no monitor: the warm-up starts the carriers before vtpin attaches.
 * Prints "HttpServerPinned: ready port=P pid=N", waits for goFile, sends the requests from
 * `clients` platform threads, prints the holds and "done", and exits.
 *
 * usage: HttpServerPinned [requests=24] [clients=12] [backendMs=20] [goFile|-]
 */
public class HttpServerPinned {

    static void answer(HttpExchange ex, String body) throws IOException {
        byte[] b = body.getBytes(StandardCharsets.UTF_8);
        ex.sendResponseHeaders(200, b.length);
        try (OutputStream out = ex.getResponseBody()) {
            out.write(b);
        }
    }

    public static void main(String[] args) throws Exception {
        ClockMark.markIfAsked(); // a test comparing JFR's times asks (ClockMark)
        int requests = args.length > 0 ? Integer.parseInt(args[0]) : 24;
        int clients = args.length > 1 ? Integer.parseInt(args[1]) : 12;
        long backendMs = args.length > 2 ? Long.parseLong(args[2]) : 20;
        String go = args.length > 3 ? args[3] : "-";
        System.out.println("java.version = " + System.getProperty("java.version"));
        try (PinnedBackend backend = new PinnedBackend(backendMs);
             ExecutorService vts = Executors.newVirtualThreadPerTaskExecutor()) {
            HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
            server.setExecutor(vts);
            server.createContext("/pin", ex -> answer(ex, backend.client.call(ex.getRequestURI().getQuery())));
            server.createContext("/warm", ex -> answer(ex, "warm " + PinnedBackend.spin(20)));
            server.start();
            int port = server.getAddress().getPort();
            PinnedBackend.load(port, "/warm", 2 * clients, clients);
            System.out.println("HttpServerPinned: ready port=" + port + " pid=" + ProcessHandle.current().pid());
            System.out.flush();
            PinnedBackend.awaitGo(go);
            PinnedBackend.load(port, "/pin", requests, clients);
            System.out.println("HttpServerPinned: requests=" + requests + " holds=" + backend.client.holds() + " done");
            System.out.flush();
            server.stop(0);
        }
    }
}
