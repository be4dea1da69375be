#!/usr/bin/env python3
"""The watchdog's rules without the kernel view, JDK 21 and 25: a block is
reported only while the carrier's OS thread sleeps (CPU-bound JNI never is one),
and a mounted virtual thread blocked inside the JVM (waiting for another
thread's class initialization) is a VM_BLOCK whose culprit is the touching
frame, with the class named from the bytecode."""
from harness import Run, check, culprit, main, pins_in, scheduler


def case_cpu_jni(jdk):
    """NativeBlock burn: two virtual threads burn CPU in C for 300 ms each. They hold
    their carriers as CPU-bound Java would: no NATIVE_BLOCK, no pin at all."""
    jdk = int(jdk)
    r = Run(jdk, "NativeBlock", args=("burn", 2, 300), props=scheduler(2)).run()
    check("NativeBlock: probe vthread ran" in r.stdout(), "the fixture ran:\n" + r.stdout())
    rep = r.report()
    check(rep["pins"] == [], "CPU-bound JNI reported as pins: %s" % [(p["reason"], p["blocked_in"]) for p in rep["pins"]])


def case_class_init(jdk):
    """ClassInitWait: a platform thread runs a static initializer that sleeps 400 ms;
    two virtual threads touch the class meanwhile and wait inside the JVM."""
    jdk = int(jdk)
    r = Run(jdk, "ClassInitWait", args=(2, 400), props=scheduler(4)).run()
    check("ClassInitWait: touchers=2" in r.stdout(), "the fixture ran:\n" + r.stdout())
    rep = r.report()
    blocks = [p for p in rep["pins"] if p["reason"] == "VM_BLOCK"]
    check(len(blocks) == 2, "2 VM_BLOCK pins (one per toucher): %s" % [p["reason"] for p in rep["pins"]])
    check(len(pins_in(rep, "ClassInitWait")) == len(rep["pins"]), "no other pins: %s" % rep["pins"])
    for p in blocks:
        c = culprit(p)
        check(c and c["class"] == "ClassInitWait" and c["method"] == "touch" and not c["native"],
              "culprit is the touching frame: %s" % c)
        check(p["stack"][0] == c, "... which is the top frame: %s" % p["stack"][:2])
        check(p["blocked_in"] and "getstatic of ClassInitWait$Slow" in p["blocked_in"],
              "the class is named: %s" % p["blocked_in"])
        check(p["vthread"]["name"].startswith("toucher-"), "a toucher: %s" % p["vthread"])
        check(p["duration_ns"] is not None and p["duration_ns"] > 0, "ended: %s" % p)


if __name__ == "__main__":
    raise SystemExit(main({
        "cpu_jni": case_cpu_jni,
        "class_init": case_class_init,
    }))
