package dev.vtpin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The Java API's pure logic, on recorded inputs, with no agent (tests/jvm/test_junit.py logic). */
class ApiLogicTests {
    /** Two records as agent/outputs/api_record.c writes them: an ended NATIVE pin, one in progress, a drop. */
    static final String RECORDED = String.join("\n",
        "pin\t7\tNATIVE\t1000\t20000000\t31\tvt-0\tForkJoinPool-1-worker-1\tapp\t1\t0\tNative or VM frame on stack"
            + "\t\t/opt/lib/libz.so.1",
        "frame\tcom.acme.Zip\tcallback\tcom.acme.Zip.callback(Zip.java:9)",
        "frame\tcom.acme.Zip\tdeflate\tcom.acme.Zip.deflate(Native Method)",
        "frame\tcom.acme.Zip$$Lambda/0x00007f0e68003000\trun\tcom.acme.Zip$$Lambda/0x00007f0e68003000.run(Unknown)",
        "pin\t8\tMONITOR\t2000\t-1\t32\t\tForkJoinPool-1-worker-2\tjdk\t-1\t1\t\tblocked by \"x\"\t",
        "pin\t5\tMONITOR\t500\t1000\t30\tearly\tc\tapp\t-1\t0\t\t\t",
        "dropped\t3",
        "");

    @Test
    void parsesTheAgentsRecords() {
        Pins pins = Vtpin.parse(RECORDED, 1000);
        assertEquals(3, pins.dropped());
        assertEquals(2, pins.list().size(), "pin 5 started before the mark");
        Pin p = pins.list().get(0);
        assertEquals(7, p.id());
        assertEquals(PinReason.NATIVE, p.reason());
        assertEquals(20, p.duration().toMillis());
        assertFalse(p.inProgress());
        assertEquals("vt-0", p.virtualThreadName());
        assertEquals("com.acme.Zip.deflate", p.culprit().orElseThrow().name());
        assertEquals(3, p.stack().size());
        assertEquals("/opt/lib/libz.so.1", p.library());
        Pin q = pins.list().get(1);
        assertTrue(q.inProgress() && q.jdkInternal() && q.truncated());
        assertTrue(q.culprit().isEmpty() && q.stack().isEmpty());
        assertEquals("blocked by \"x\"", q.blocker());
    }

    @Test
    void globsAsFnmatch() {
        assertTrue(PinRule.glob("com.acme.*").matcher("com.acme.db.Repo.save").matches(), "* crosses dots");
        assertFalse(PinRule.glob("com.acme.*").matcher("com.acmex.Repo.save").matches());
        assertTrue(PinRule.glob("*.Repo.sav?").matcher("a.Repo.save").matches());
        assertTrue(PinRule.glob("x.[ab]").matcher("x.b").matches());
        assertFalse(PinRule.glob("x.[!ab]").matcher("x.b").matches());
        assertTrue(PinRule.glob("Foo$$Lambda*").matcher("Foo$$Lambda/0x1.run").matches(), "$ is literal");
    }

    @Test
    void rulesSetPinsAside() {
        List<Pin> pins = Vtpin.parse(RECORDED, 0).list();
        assertEquals(List.of(pins.get(0), pins.get(2)), new PinRule(List.of(), List.of(), Set.of()).counted(pins),
                     "the JDK's own pin never counts");
        assertEquals(List.of(pins.get(2)), new PinRule(List.of("*.Zip.callback"), List.of(), Set.of()).counted(pins),
                     "allow: any frame");
        assertEquals(List.of(pins.get(0)), new PinRule(List.of(), List.of("com.acme.*"), Set.of()).counted(pins),
                     "only: the culprit, and a pin without one does not count");
        assertEquals(List.of(pins.get(2)),
                     new PinRule(List.of(), List.of(), Set.of(PinReason.MONITOR)).counted(pins), "reasons");
    }

    @Test
    void sitesAsVtpinRunNamesThem() {
        assertEquals("Foo$$Lambda", PinSite.normalize("Foo$$Lambda/0x00007f0e68003000"));
        assertEquals("Foo$$Lambda", PinSite.normalize("Foo$$Lambda$12"));
        assertEquals("jdk.proxy.$Proxy", PinSite.normalize("jdk.proxy3.$Proxy12"));
        assertEquals("java.lang.invoke.LambdaForm$MH", PinSite.normalize("java.lang.invoke.LambdaForm$MH/0x1"));
        List<Pin> pins = Vtpin.parse(RECORDED, 0).list();
        assertEquals(new PinSite("com.acme.Zip", "deflate", "NATIVE", "libz.so.1"), PinSite.of(pins.get(0)));
        assertEquals(new PinSite("(no stack)", "", "MONITOR", ""), PinSite.of(pins.get(2)));
    }

    @Test
    void readsABaseline(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("b.json");
        Files.writeString(file, "{\n  \"format\": \"vtpin.baseline/1\",\n  \"sites\": [\n"
            + "    {\"class\": \"com.acme.Zip\", \"method\": \"deflate\", \"reason\": \"NATIVE\", \"library\":"
            + " \"libz.so.1\", \"pins\": 4},\n"
            + "    {\"class\": \"com.acme.Repo\", \"method\": \"save\", \"reason\": \"MONITOR\", \"library\": null,"
            + " \"pins\": 100}\n  ]\n}\n");
        Baseline b = Baseline.read(file);
        assertEquals(2, b.sites().size());
        List<Pin> pins = Vtpin.parse(RECORDED, 0).list();
        assertTrue(b.accepts(pins.get(0)));
        assertFalse(b.accepts(pins.get(2)));
        Files.writeString(file, "{\"format\": \"other\", \"sites\": []}");
        assertThrows(IllegalArgumentException.class, () -> Baseline.read(file));
        Files.writeString(file, "{\"format\": \"vtpin.baseline/1\", \"sites\": [");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Baseline.read(file));
        assertTrue(e.getMessage().contains("not JSON"), e.getMessage());
    }
}
