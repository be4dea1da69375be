"""The load that tests and bench/ put beside a JVM, so that "exact under load" is one thing measured
one way: busy loops, a CPU quota on the JVM (a cgroup), and preemption (bursts that take a CPU
away at random moments).

    with Load(busy=2, quota_pct=20) as load:
        Run(21, "CarrierHog", ..., load=load).run()

  busy       N processes that spin for ever (oversubscription: on 2 cores, a 2-carrier JVM and 2
             busy loops is 2x; 6 is 4x)
  quota_pct  the JVM's cgroup may use that % of one CPU per 100 ms period (cpu.max, or
             cpu.cfs_quota_us on cgroup v1): it runs, then is frozen for the rest of the period,
             as a container with a CPU limit is
  preempt    N processes that spin for 1-20 ms, then sleep for 1-20 ms, at a higher priority than
             the JVM (nice -10): each burst takes a CPU from a running JVM thread at a random point

A quota needs root and a cgroup cpu controller; without them the test skips, saying why."""
import os
import subprocess
import sys

from harness import skip

PERIOD_US = 100_000

# Each loop dies with the process that started it (PR_SET_PDEATHSIG): a test killed at its timeout,
# or a ctest run stopped, must not leave its loops spinning under the tests and benches that follow
# (two such orphans once spoiled a bench run and a set of probe runs).
_DIE_WITH_PARENT = """
import ctypes, os, signal, sys
ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
if os.getppid() != int(sys.argv[1]):
    sys.exit(0)  # the parent was gone before the line above
"""
_BUSY = _DIE_WITH_PARENT + "while True: pass"
_PREEMPT = _DIE_WITH_PARENT + """
import os, random, time
os.nice(-10)
while True:
    end = time.monotonic() + random.uniform(0.001, 0.020)
    while time.monotonic() < end:
        pass
    time.sleep(random.uniform(0.001, 0.020))
"""


def _cgroup_root():
    """(directory under which to make a cpu cgroup, its version) or skips."""
    if os.geteuid() != 0:
        skip("a CPU quota needs root (a cgroup of its own)")
    v2 = "/sys/fs/cgroup"
    if os.path.exists(os.path.join(v2, "cgroup.controllers")):
        with open(os.path.join(v2, "cgroup.subtree_control")) as f:
            if "cpu" not in f.read().split():
                skip("cgroup v2 without the cpu controller enabled at its root")
        return v2, 2
    v1 = "/sys/fs/cgroup/cpu"
    if os.path.exists(os.path.join(v1, "cpu.cfs_quota_us")):
        return v1, 1
    skip("no cgroup cpu controller (neither v2 nor v1 /sys/fs/cgroup/cpu)")


class Load:
    def __init__(self, busy=0, quota_pct=None, preempt=0):
        self.busy, self.quota_pct, self.preempt = busy, quota_pct, preempt
        self.procs = []
        self.cgroup = None

    def describe(self):
        parts = ["%d busy loop(s)" % self.busy] if self.busy else []
        if self.quota_pct:
            parts.append("a %d %% CPU quota" % self.quota_pct)
        if self.preempt:
            parts.append("%d preempting burst loop(s)" % self.preempt)
        return ", ".join(parts) or "no load"

    def __enter__(self):
        if self.quota_pct:
            root, version = _cgroup_root()
            self.cgroup = os.path.join(root, "vtpin-load-%d" % os.getpid())
            os.makedirs(self.cgroup, exist_ok=True)
            quota = PERIOD_US * self.quota_pct // 100
            if version == 2:
                with open(os.path.join(self.cgroup, "cpu.max"), "w") as f:
                    f.write("%d %d" % (quota, PERIOD_US))
            else:
                with open(os.path.join(self.cgroup, "cpu.cfs_period_us"), "w") as f:
                    f.write(str(PERIOD_US))
                with open(os.path.join(self.cgroup, "cpu.cfs_quota_us"), "w") as f:
                    f.write(str(quota))
        me = str(os.getpid())
        self.procs = [subprocess.Popen([sys.executable, "-c", _BUSY, me]) for _ in range(self.busy)]
        self.procs += [subprocess.Popen([sys.executable, "-c", _PREEMPT, me]) for _ in range(self.preempt)]
        return self

    def wrap(self, cmd):
        """cmd, started inside the quota's cgroup (the same process: sh joins the cgroup, then execs)."""
        if not self.cgroup:
            return list(cmd)
        return ["sh", "-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"', self.cgroup] + list(cmd)

    def __exit__(self, *exc):
        for p in self.procs:
            p.kill()
            p.wait()
        self.procs = []
        if self.cgroup:
            try:
                os.rmdir(self.cgroup)  # empty once its JVMs ended; a JVM still in it keeps it
            except OSError:
                pass
        return False
