/* proto/pprof_build: a profile built, encoded, gunzipped and unpacked again
 * with protobuf-c, field by field. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "pprof.pb-c.h"
#include "pprof_build.h"

static const char *str(const Vtpin__Pprof__Profile *p, int64_t i)
{
    return i >= 0 && (size_t)i < p->n_string_table ? p->string_table[i] : "<out of table>";
}

static const Vtpin__Pprof__Function *function_of(const Vtpin__Pprof__Profile *p, uint64_t location_id)
{
    for (size_t i = 0; i < p->n_location; i++) {
        if (p->location[i]->id != location_id || p->location[i]->n_line != 1)
            continue;
        for (size_t k = 0; k < p->n_function; k++)
            if (p->function[k]->id == p->location[i]->line[0]->function_id)
                return p->function[k];
    }
    return NULL;
}

static int64_t line_of(const Vtpin__Pprof__Profile *p, uint64_t location_id)
{
    for (size_t i = 0; i < p->n_location; i++)
        if (p->location[i]->id == location_id && p->location[i]->n_line == 1)
            return p->location[i]->line[0]->line;
    return -1;
}

static const char *label(const Vtpin__Pprof__Profile *p, const Vtpin__Pprof__Sample *s, const char *key)
{
    for (size_t i = 0; i < s->n_label; i++)
        if (strcmp(str(p, s->label[i]->key), key) == 0)
            return s->label[i]->str ? str(p, s->label[i]->str) : "<numeric>";
    return NULL;
}

static Vtpin__Pprof__Profile *round_trip(const struct pprof_builder *b)
{
    uint8_t *gz = NULL, *raw = NULL;
    size_t gz_len = 0, raw_len = 0;
    if (!CHECK_INT(pprof_builder_encode(b, &gz, &gz_len), 0))
        return NULL;
    CHECK(gz_len > 2 && gz[0] == 0x1f && gz[1] == 0x8b); /* gzip, as pprof readers expect */
    Vtpin__Pprof__Profile *p = NULL;
    if (CHECK_INT(pprof_gunzip(gz, gz_len, 1u << 24, &raw, &raw_len), 0))
        p = vtpin__pprof__profile__unpack(NULL, raw_len, raw);
    CHECK(p != NULL);
    if (p) { /* packing what was unpacked gives the same bytes: size and pack agree */
        size_t size = vtpin__pprof__profile__get_packed_size(p);
        uint8_t *again = malloc(size + 1);
        CHECK_UINT(size, raw_len);
        CHECK(again && vtpin__pprof__profile__pack(p, again) == size && memcmp(again, raw, size) == 0);
        free(again);
    }
    free(gz);
    free(raw);
    return p;
}

static void test_round_trip(void)
{
    struct pprof_builder *b = NULL;
    if (!CHECK_INT(pprof_builder_new(&b, pprof_pinned_types, PPROF_PINNED_N), 0))
        return;
    pprof_builder_set_time(b, 1700000000000000000LL, 60000000000LL);
    CHECK_INT(pprof_builder_comment(b, "vtpin test"), 0);
    int64_t leaf = pprof_builder_location(b, "[native: JNI libjnisleep.so]", NULL, 0);
    int64_t sleep = pprof_builder_location(b, "JniSleep.sleep", "JniSleep.java", 0);
    int64_t run = pprof_builder_location(b, "JniSleep.run", "JniSleep.java", 42);
    int64_t run2 = pprof_builder_location(b, "JniSleep.run", "JniSleep.java", 42);
    int64_t run_other_line = pprof_builder_location(b, "JniSleep.run", "JniSleep.java", 43);
    CHECK(leaf > 0 && sleep > 0 && run > 0);
    CHECK_INT(run2, run); /* interned */
    CHECK(run_other_line != run);
    CHECK_UINT(pprof_builder_locations(b), 4);

    uint64_t stack[] = {(uint64_t)leaf, (uint64_t)sleep, (uint64_t)run};
    struct pprof_label labels[] = {
        {.key = "reason", .str = "native"}, {.key = "origin", .str = "app"}, {.key = "pid", .str = "4242"}};
    int64_t one[PPROF_PINNED_N] = {1500, 1, 0}, two[PPROF_PINNED_N] = {2500, 1, 0};
    CHECK_INT(pprof_builder_sample(b, stack, 3, one, labels, 3), 0);
    CHECK_INT(pprof_builder_sample(b, stack, 3, two, labels, 3), 0); /* same stack and labels: merged */
    struct pprof_label monitor[] = {
        {.key = "reason", .str = "monitor"}, {.key = "origin", .str = "app"}, {.key = "pid", .str = "4242"}};
    CHECK_INT(pprof_builder_sample(b, stack, 3, one, monitor, 3), 0); /* another reason: its own sample */
    struct pprof_label numeric[] = {{.key = "carrier", .num = 17, .num_unit = "tid"}};
    CHECK_INT(pprof_builder_sample(b, stack + 1, 2, one, numeric, 1), 0);
    uint64_t bad[] = {99};
    CHECK_INT(pprof_builder_sample(b, bad, 1, one, NULL, 0), -EINVAL);
    CHECK_UINT(pprof_builder_samples(b), 3);

    Vtpin__Pprof__Profile *p = round_trip(b);
    pprof_builder_free(b);
    if (!p)
        return;
    CHECK(p->n_string_table > 0 && strcmp(p->string_table[0], "") == 0);
    if (CHECK_UINT(p->n_sample_type, 3)) {
        CHECK_STR(str(p, p->sample_type[0]->type), "pinned");
        CHECK_STR(str(p, p->sample_type[0]->unit), "nanoseconds");
        CHECK_STR(str(p, p->sample_type[1]->type), "pins");
        CHECK_STR(str(p, p->sample_type[1]->unit), "count");
        CHECK_STR(str(p, p->sample_type[2]->type), "hogged");
        CHECK_STR(str(p, p->sample_type[2]->unit), "nanoseconds");
    }
    CHECK_STR(str(p, p->default_sample_type), "pinned");
    CHECK(p->period_type && strcmp(str(p, p->period_type->type), "pinned") == 0);
    CHECK_INT(p->time_nanos, 1700000000000000000LL);
    CHECK_INT(p->duration_nanos, 60000000000LL);
    CHECK(p->n_comment == 1 && strcmp(str(p, p->comment[0]), "vtpin test") == 0);
    CHECK_UINT(p->n_location, 4);
    CHECK_UINT(p->n_function, 3); /* JniSleep.run at two lines is one function */
    if (!CHECK_UINT(p->n_sample, 3))
        goto out;
    const Vtpin__Pprof__Sample *s = p->sample[0];
    if (CHECK_UINT(s->n_location_id, 3) && CHECK_UINT(s->n_value, 3)) {
        CHECK_INT(s->value[0], 4000);
        CHECK_INT(s->value[1], 2);
        CHECK_INT(s->value[2], 0);
        const Vtpin__Pprof__Function *f = function_of(p, s->location_id[0]);
        CHECK(f && strcmp(str(p, f->name), "[native: JNI libjnisleep.so]") == 0);
        f = function_of(p, s->location_id[2]);
        CHECK(f && strcmp(str(p, f->name), "JniSleep.run") == 0 && strcmp(str(p, f->filename), "JniSleep.java") == 0);
        CHECK_INT(line_of(p, s->location_id[2]), 42);
        CHECK_STR(label(p, s, "reason"), "native");
        CHECK_STR(label(p, s, "origin"), "app");
        CHECK_STR(label(p, s, "pid"), "4242");
    }
    CHECK_STR(label(p, p->sample[1], "reason"), "monitor");
    CHECK(p->sample[1]->n_value == 3 && p->sample[1]->value[0] == 1500);
    const Vtpin__Pprof__Sample *n = p->sample[2];
    if (CHECK_UINT(n->n_label, 1)) {
        CHECK_INT(n->label[0]->num, 17);
        CHECK_INT(n->label[0]->str, 0);
        CHECK_STR(str(p, n->label[0]->num_unit), "tid");
    }
out:
    vtpin__pprof__profile__free_unpacked(p, NULL);
}

static void test_empty_and_limits(void)
{
    struct pprof_builder *b = NULL;
    CHECK_INT(pprof_builder_new(&b, pprof_pinned_types, 0), -EINVAL);
    CHECK_INT(pprof_builder_new(&b, pprof_pinned_types, PPROF_MAX_TYPES + 1), -EINVAL);
    /* every profile of pins has the three types: pinned, pins, hogged */
    if (!CHECK_INT(pprof_builder_new(&b, pprof_pinned_types, PPROF_PINNED_N), 0))
        return;
    struct pprof_label many[PPROF_MAX_LABELS + 1] = {{.key = "k", .str = "v"}};
    int64_t v[PPROF_PINNED_N] = {1, 1, 1};
    CHECK_INT(pprof_builder_sample(b, NULL, 0, v, many, PPROF_MAX_LABELS + 1), -EINVAL);
    Vtpin__Pprof__Profile *p = round_trip(b); /* no samples: still a valid profile */
    pprof_builder_free(b);
    if (!p)
        return;
    CHECK_UINT(p->n_sample, 0);
    CHECK(p->n_sample_type == 3 && strcmp(str(p, p->sample_type[2]->type), "hogged") == 0);
    vtpin__pprof__profile__free_unpacked(p, NULL);
    pprof_builder_free(NULL);

    uint8_t junk[] = "not gzip at all", *out = NULL;
    size_t len = 0;
    CHECK_INT(pprof_gunzip(junk, sizeof(junk), 1024, &out, &len), -EPROTO);
    CHECK(out == NULL);
}

int main(void)
{
    test_round_trip();
    test_empty_and_limits();
    CHECK_MAIN_RETURN();
}
