/* Offsets read from HotSpot's machine code (collector/kernel/jvmcode.c), on
 * Continuation::pin(JavaThread*) as each JDK on this machine compiled it
 * (objdump of its libjvm.so), and on that code with one part of its shape
 * changed, which must give no offset. The offsets of 25 and 26 are the ones
 * their JVMCI VM structs list (JavaThread::_cont_entry,
 * ContinuationEntry::_pin_count), as the collector read them live. */
#include <errno.h>
#include <string.h>

#include "check.h"
#include "jvmcode.h"

/* Debian 21.0.13+9-1-deb13u2: endbr64; mov 0x538(%rdi),%rdx; test; je; mov 0x38(%rdx),%eax; xor %ecx,%ecx;
 * cmp $-1,%eax; je; add $1,%eax; mov %eax,0x38(%rdx); mov $1,%ecx; mov %ecx,%eax; ret */
static const uint8_t jdk21[] = {0xf3, 0x0f, 0x1e, 0xfa, 0x48, 0x8b, 0x97, 0x38, 0x05, 0x00, 0x00, 0x48, 0x85, 0xd2,
                                0x74, 0x10, 0x8b, 0x42, 0x38, 0x31, 0xc9, 0x83, 0xf8, 0xff, 0x74, 0x0b, 0x83, 0xc0,
                                0x01, 0x89, 0x42, 0x38, 0xb9, 0x01, 0x00, 0x00, 0x00, 0x89, 0xc8, 0xc3};
/* Temurin 25.0.3+9-LTS: no endbr64, 0x618 and 0x38, then the padding that follows it */
static const uint8_t temurin25[] = {0x48, 0x8b, 0x97, 0x18, 0x06, 0x00, 0x00, 0x48, 0x85, 0xd2, 0x74, 0x10, 0x8b, 0x42,
                                    0x38, 0x31, 0xc9, 0x83, 0xf8, 0xff, 0x74, 0x0b, 0x83, 0xc0, 0x01, 0x89, 0x42, 0x38,
                                    0xb9, 0x01, 0x00, 0x00, 0x00, 0x89, 0xc8, 0xc3, 0x66, 0x66, 0x2e, 0x0f};
/* Debian 26.0.2.1+1-1: 0x5f8 and 0x30 */
static const uint8_t jdk26[] = {0xf3, 0x0f, 0x1e, 0xfa, 0x48, 0x8b, 0x97, 0xf8, 0x05, 0x00, 0x00, 0x48, 0x85, 0xd2,
                                0x74, 0x10, 0x8b, 0x42, 0x30, 0x31, 0xc9, 0x83, 0xf8, 0xff, 0x74, 0x0b, 0x83, 0xc0,
                                0x01, 0x89, 0x42, 0x30, 0xb9, 0x01, 0x00, 0x00, 0x00, 0x89, 0xc8, 0xc3};
/* Debian 27.0.1.0.3+1-1 (no JVMCI tables): 0x5b0 and 0x30 */
static const uint8_t jdk27[] = {0xf3, 0x0f, 0x1e, 0xfa, 0x48, 0x8b, 0x97, 0xb0, 0x05, 0x00, 0x00, 0x48, 0x85, 0xd2,
                                0x74, 0x10, 0x8b, 0x42, 0x30, 0x31, 0xc9, 0x83, 0xf8, 0xff, 0x74, 0x0b, 0x83, 0xc0,
                                0x01, 0x89, 0x42, 0x30, 0xb9, 0x01, 0x00, 0x00, 0x00, 0x89, 0xc8, 0xc3};

static void expect(const uint8_t *code, size_t len, uint32_t want_entry, uint32_t want_count)
{
    uint32_t entry = 0, count = 0;
    if (CHECK_INT(jvmcode_pin_offsets(code, len, &entry, &count), 0)) {
        CHECK_INT(entry, want_entry);
        CHECK_INT(count, want_count);
    }
}

/* jdk21 with bytes [at, at + n) replaced by patch: not the shape, so no offset. */
static void refused(const char *what, size_t at, const uint8_t *patch, size_t n)
{
    uint8_t code[sizeof(jdk21)];
    memcpy(code, jdk21, sizeof(code));
    memcpy(code + at, patch, n);
    uint32_t entry = 7, count = 7;
    int rc = jvmcode_pin_offsets(code, sizeof(code), &entry, &count);
    if (!CHECK_INT(rc, -ENOTSUP))
        fprintf(stderr, "  (%s was taken: %u, %u)\n", what, entry, count);
    CHECK(entry == 7 && count == 7);
}

int main(void)
{
    expect(jdk21, sizeof(jdk21), 0x538, 0x38);
    expect(temurin25, sizeof(temurin25), 0x618, 0x38);
    expect(jdk26, sizeof(jdk26), 0x5f8, 0x30);
    expect(jdk27, sizeof(jdk27), 0x5b0, 0x30);

    /* the first load through another register than the thread argument: mov 0x538(%rsi),%rdx */
    refused("a load through rsi", 4, (const uint8_t[]){0x48, 0x8b, 0x96}, 3);
    /* something else before it: mov %rsi,%rdi in place of the endbr64 (the argument is not the thread) */
    refused("rdi overwritten first", 0, (const uint8_t[]){0x48, 0x89, 0xf7, 0x90}, 4);
    /* the overflow check compares with 0 (cmp $0,%eax): not the pin count's */
    refused("cmp with 0", 21, (const uint8_t[]){0x83, 0xf8, 0x00}, 3);
    /* the count is stored elsewhere: mov %eax,0x3c(%rdx) */
    refused("a store to another field", 29, (const uint8_t[]){0x89, 0x42, 0x3c}, 3);
    /* the entry register changes between the load and the store: xor %edx,%edx in place of xor %ecx,%ecx */
    refused("the entry register written", 19, (const uint8_t[]){0x31, 0xd2}, 2);
    /* an early return */
    refused("ret before the store", 26, (const uint8_t[]){0xc3}, 1);
    /* cut short: no store seen */
    uint32_t entry, count;
    CHECK_INT(jvmcode_pin_offsets(jdk21, 26, &entry, &count), -ENOTSUP);
    CHECK_INT(jvmcode_pin_offsets(jdk21, 0, &entry, &count), -ENOTSUP);
    CHECK_MAIN_RETURN();
}
