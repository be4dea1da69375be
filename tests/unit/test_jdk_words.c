/* Unit tests for agent/callbacks/jdk_words.c: freeze results read by name (26 moved
 * EXCEPTION to 4 when MONITOR went away), and the JDK's words for each kind of
 * pin in JavaThread::post_vthread_pinned_event's order. */
#include "jdk_words.h"

#include "check.h"

static void test_tables(void)
{
    struct jdk_words w25 = {0}, w26 = {0}, assumed;
    /* Continuation.pinnedReason on 25: 2 CRITICAL_SECTION, 3 NATIVE, 4 MONITOR, 5 EXCEPTION */
    jdk_words_learn(&w25, 2, "CRITICAL_SECTION");
    jdk_words_learn(&w25, 3, "NATIVE");
    jdk_words_learn(&w25, 4, "MONITOR");
    jdk_words_learn(&w25, 5, "EXCEPTION");
    /* on 26 and 27: 2 CRITICAL_SECTION, 3 NATIVE, 4 EXCEPTION */
    jdk_words_learn(&w26, 2, "CRITICAL_SECTION");
    jdk_words_learn(&w26, 3, "NATIVE");
    jdk_words_learn(&w26, 4, "EXCEPTION");
    CHECK_INT(jdk_words_reason(&w25, 4), REASON_MONITOR);
    CHECK_INT(jdk_words_reason(&w26, 4), REASON_UNKNOWN); /* EXCEPTION: no reason of vtpin's */
    CHECK_INT(jdk_words_reason(&w26, 3), REASON_NATIVE);
    CHECK_INT(jdk_words_reason(&w26, 2), REASON_CRITICAL_SECTION);
    CHECK_INT(jdk_words_reason(&w26, 5), REASON_UNKNOWN); /* not named by this JDK */
    CHECK_INT(jdk_words_reason(&w26, 0), REASON_UNKNOWN);
    CHECK_INT(jdk_words_reason(&w26, -1), REASON_UNKNOWN);
    CHECK_INT(jdk_words_reason(&w26, JDK_WORDS_CODES), REASON_UNKNOWN);
    jdk_words_learn(&w26, JDK_WORDS_CODES + 3, "NATIVE"); /* out of range: ignored */
    jdk_words_learn(&w26, 7, NULL);
    CHECK_INT(jdk_words_reason(&w26, 7), REASON_UNKNOWN);
    jdk_words_assume(&assumed);
    CHECK_INT(assumed.read_from_jdk, 0);
    CHECK_INT(jdk_words_reason(&assumed, 2), REASON_CRITICAL_SECTION);
    CHECK_INT(jdk_words_reason(&assumed, 3), REASON_NATIVE);
    CHECK_INT(jdk_words_reason(&assumed, 4), REASON_MONITOR);
}

static const char *words(int jdk, int reason, int code, const char *clinit, const char *waits)
{
    static char out[JDK_REASON_MAX];
    struct jdk_words_pin p = {
        .jdk_feature = jdk, .reason = reason, .code = code, .clinit_class = clinit, .waits_for_class = waits};
    jdk_words_format(&p, out, sizeof(out));
    return out;
}

static void test_words(void)
{
    /* the strings JFR's pinnedReason has on 24+ */
    CHECK_STR(words(25, REASON_NATIVE, 3, NULL, NULL), "Native or VM frame on stack");
    CHECK_STR(words(27, REASON_NATIVE, 3, "com.example.Slow", NULL), "VM call to com.example.Slow.<clinit> on stack");
    /* a class initialization comes first, whatever the freeze result (26's critical section there) */
    CHECK_STR(words(26, REASON_CRITICAL_SECTION, 2, "A$B", NULL), "VM call to A$B.<clinit> on stack");
    CHECK_STR(words(25, REASON_VM_BLOCK, -1, "Outer", "A$Slow"),
              "Waited for initialization of A$Slow by another thread");
    CHECK_STR(words(26, REASON_CRITICAL_SECTION, 2, NULL, NULL), "Freeze or preempt failed (2)");
    CHECK_STR(words(26, REASON_UNKNOWN, 4, NULL, NULL), "Freeze or preempt failed (4)");
    CHECK_STR(words(25, REASON_NATIVE_BLOCK, -1, NULL, NULL), "Native or VM frame on stack");
    CHECK_STR(words(27, REASON_VM_BLOCK, -1, NULL, ""), "Native or VM frame on stack");
    /* 21-23: the equivalents */
    CHECK_STR(words(21, REASON_MONITOR, 4, NULL, NULL), "Monitor held");
    CHECK_STR(words(21, REASON_MONITOR_ENTER, -1, NULL, NULL), "Contended monitor enter");
    CHECK_STR(words(21, REASON_OBJECT_WAIT, -1, NULL, NULL), "Object.wait");
    CHECK_STR(words(21, REASON_CRITICAL_SECTION, 2, NULL, NULL), "Critical section");
    CHECK_STR(words(21, REASON_NATIVE, 3, "X", NULL), "VM call to X.<clinit> on stack");
    /* nothing known */
    CHECK_STR(words(25, REASON_UNKNOWN, -1, NULL, NULL), "");
    CHECK_STR(words(25, REASON_UNKNOWN, 1, NULL, NULL), "");
    /* a long class name is cut, never overrun */
    char big[400];
    memset(big, 'a', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    CHECK_INT((long)strlen(words(25, REASON_VM_BLOCK, -1, NULL, big)), JDK_REASON_MAX - 1);
}

int main(void)
{
    CHECK_RUN(test_tables);
    CHECK_RUN(test_words);
    CHECK_MAIN_RETURN();
}
