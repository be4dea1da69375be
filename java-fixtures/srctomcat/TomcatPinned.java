import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import org.apache.catalina.Context;
import org.apache.catalina.connector.Connector;
import org.apache.catalina.startup.Tomcat;

/**
 * Embedded Apache Tomcat 10.1 (Debian's libtomcat10-java) whose Http11NioProtocol connector runs
 * requests on virtual threads (useVirtualThreads=true). Its servlet at /pin calls the shared
 * PinnedBackend.Client, whose synchronized call() does ~backendMs of socket I/O: one hold of the
 * one monitor per request (a MONITOR pin on JDK 21-23), the requests queued behind it blocked
 * entering it (MONITOR_ENTER). /warm spins 20 ms on CPU and touches no monitor: the warm-up
 * starts the carriers before vtpin attaches. Prints "TomcatPinned: ready port=P pid=N", waits
 * for goFile, sends the requests from `clients` platform threads, prints the holds and "done",
 * and exits.
 *
 * usage: TomcatPinned [requests=24] [clients=12] [backendMs=20] [goFile|-]
 */
public class TomcatPinned {

    static final class PinServlet extends HttpServlet {
        private final transient PinnedBackend.Client client;

        PinServlet(PinnedBackend.Client client) {
            this.client = client;
        }

        @Override
        protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            String answer = client.call(req.getParameter("n"));
            resp.setContentType("text/plain");
            resp.getWriter().write(answer + "\n");
        }
    }

    static final class WarmServlet extends HttpServlet {
        @Override
        protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            resp.setContentType("text/plain");
            resp.getWriter().write("warm " + PinnedBackend.spin(20) + "\n");
        }
    }

    public static void main(String[] args) throws Exception {
        ClockMark.markIfAsked(); // a test comparing JFR's times asks (ClockMark)
        int requests = args.length > 0 ? Integer.parseInt(args[0]) : 24;
        int clients = args.length > 1 ? Integer.parseInt(args[1]) : 12;
        long backendMs = args.length > 2 ? Long.parseLong(args[2]) : 20;
        String go = args.length > 3 ? args[3] : "-";
        System.out.println("java.version = " + System.getProperty("java.version"));
        File base = Files.createTempDirectory("vtpin-tomcat-").toFile();
        try (PinnedBackend backend = new PinnedBackend(backendMs)) {
            Tomcat tomcat = new Tomcat();
            tomcat.setBaseDir(base.getAbsolutePath());
            Connector connector = new Connector("org.apache.coyote.http11.Http11NioProtocol");
            connector.setPort(0);
            connector.setProperty("address", "127.0.0.1");
            if (!connector.setProperty("useVirtualThreads", "true")) {
                throw new IllegalStateException("this Tomcat has no useVirtualThreads");
            }
            tomcat.setConnector(connector);
            Context ctx = tomcat.addContext("", base.getAbsolutePath());
            Tomcat.addServlet(ctx, "pin", new PinServlet(backend.client)).addMapping("/pin");
            Tomcat.addServlet(ctx, "warm", new WarmServlet()).addMapping("/warm");
            tomcat.start();
            int port = connector.getLocalPort();
            PinnedBackend.load(port, "/warm", 2 * clients, clients);
            System.out.println("TomcatPinned: ready port=" + port + " pid=" + ProcessHandle.current().pid());
            System.out.flush();
            PinnedBackend.awaitGo(go);
            PinnedBackend.load(port, "/pin", requests, clients);
            System.out.println("TomcatPinned: requests=" + requests + " holds=" + backend.client.holds() + " done");
            System.out.flush();
            tomcat.stop();
            tomcat.destroy();
        } finally {
            deleteTree(base);
        }
    }

    static void deleteTree(File f) {
        File[] children = f.listFiles();
        if (children != null) for (File c : children) deleteTree(c);
        if (!f.delete()) f.deleteOnExit();
    }
}
