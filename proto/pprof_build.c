#include "pprof_build.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "common/hash.h"
#include "common/table.h"
#include "pprof.pb-c.h"

const struct pprof_value_type pprof_pinned_types[3] = {
    [PPROF_VALUE_PINNED_NS] = {"pinned", "nanoseconds"},
    [PPROF_VALUE_PINS] = {"pins", "count"},
    [PPROF_VALUE_HOGGED_NS] = {"hogged", "nanoseconds"},
};

struct function {
    int64_t name, file;
};

struct location {
    uint64_t function;
    int64_t line;
};

struct label {
    int64_t key, str, num, unit;
};

struct sample {
    size_t loc_at, n_loc, label_at, n_label, value_at;
};

struct pprof_builder {
    size_t n_types;
    int64_t types[PPROF_MAX_TYPES][2]; /* string indices */
    int64_t time_nanos, duration_nanos;
    char **strings;
    size_t n_strings, strings_cap;
    struct table string_ix; /* each index: entries by content (common/table.h), grown at first use */
    struct function *functions;
    size_t n_functions, functions_cap;
    struct table function_ix;
    struct location *locations;
    size_t n_locations, locations_cap;
    struct table location_ix;
    struct sample *samples;
    size_t n_samples, samples_cap;
    struct table sample_ix;
    uint64_t *locs; /* every sample's locations, one after another */
    size_t n_locs, locs_cap;
    struct label *labels;
    size_t n_labels, labels_cap;
    int64_t *values;
    size_t n_values, values_cap;
    int64_t *comments;
    size_t n_comments, comments_cap;
};

/* Room for one more of size elements in *arr of *cap: 0 or -ENOMEM. */
static int grow(void **arr, size_t *cap, size_t n, size_t size)
{
    if (n < *cap)
        return 0;
    size_t ncap = *cap ? *cap * 2 : 64;
    if (ncap > SIZE_MAX / size)
        return -ENOMEM;
    void *p = realloc(*arr, ncap * size);
    if (!p)
        return -ENOMEM;
    *arr = p;
    *cap = ncap;
    return 0;
}

/* Adds entry to an index of entries by content; 0 or -ENOMEM. */
static int index_add(struct table *ix, uint64_t h, size_t entry)
{
    return entry > TABLE_MAX_ITEM || table_add(ix, h, (uint32_t)entry) ? -ENOMEM : 0;
}

static int string_eq(const void *ctx, uint32_t entry, const void *key)
{
    const struct pprof_builder *b = ctx;
    return strcmp(b->strings[entry], key) == 0;
}

/* The string's index in the table (0 for "" and NULL), or -ENOMEM. */
static int64_t intern(struct pprof_builder *b, const char *s)
{
    if (!s || !*s)
        return 0;
    uint64_t h = hash_string(s);
    int64_t at = table_find(&b->string_ix, h, string_eq, b, s);
    if (at >= 0)
        return at;
    char *copy = strdup(s);
    if (!copy || grow((void **)&b->strings, &b->strings_cap, b->n_strings, sizeof(*b->strings)) ||
        index_add(&b->string_ix, h, b->n_strings)) {
        free(copy);
        return -ENOMEM;
    }
    b->strings[b->n_strings] = copy;
    return (int64_t)b->n_strings++;
}

int pprof_builder_new(struct pprof_builder **out, const struct pprof_value_type *types, size_t n)
{
    *out = NULL;
    if (n == 0 || n > PPROF_MAX_TYPES)
        return -EINVAL;
    struct pprof_builder *b = calloc(1, sizeof(*b));
    if (!b)
        return -ENOMEM;
    /* entry 0 is "", as the format wants */
    if (grow((void **)&b->strings, &b->strings_cap, 0, sizeof(*b->strings)) || !(b->strings[0] = strdup("")) ||
        index_add(&b->string_ix, hash_string(""), 0))
        goto fail;
    b->n_strings = 1;
    b->n_types = n;
    for (size_t i = 0; i < n; i++) {
        if ((b->types[i][0] = intern(b, types[i].type)) < 0 || (b->types[i][1] = intern(b, types[i].unit)) < 0)
            goto fail;
    }
    *out = b;
    return 0;
fail:
    pprof_builder_free(b);
    return -ENOMEM;
}

void pprof_builder_free(struct pprof_builder *b)
{
    if (!b)
        return;
    for (size_t i = 0; i < b->n_strings; i++)
        free(b->strings[i]);
    free(b->strings);
    table_fini(&b->string_ix);
    free(b->functions);
    table_fini(&b->function_ix);
    free(b->locations);
    table_fini(&b->location_ix);
    free(b->samples);
    table_fini(&b->sample_ix);
    free(b->locs);
    free(b->labels);
    free(b->values);
    free(b->comments);
    free(b);
}

void pprof_builder_set_time(struct pprof_builder *b, int64_t time_nanos, int64_t duration_nanos)
{
    b->time_nanos = time_nanos;
    b->duration_nanos = duration_nanos;
}

int pprof_builder_comment(struct pprof_builder *b, const char *text)
{
    int64_t s = intern(b, text);
    if (s < 0 || grow((void **)&b->comments, &b->comments_cap, b->n_comments, sizeof(*b->comments)))
        return -ENOMEM;
    b->comments[b->n_comments++] = s;
    return 0;
}

static int function_eq(const void *ctx, uint32_t entry, const void *key)
{
    const struct pprof_builder *b = ctx;
    const struct function *k = key;
    return b->functions[entry].name == k->name && b->functions[entry].file == k->file;
}

static int location_eq(const void *ctx, uint32_t entry, const void *key)
{
    const struct pprof_builder *b = ctx;
    const struct location *k = key;
    return b->locations[entry].function == k->function && b->locations[entry].line == k->line;
}

int64_t pprof_builder_location(struct pprof_builder *b, const char *function, const char *file, int64_t line)
{
    struct function f = {.name = intern(b, function ? function : "<unknown>"), .file = intern(b, file)};
    if (f.name < 0 || f.file < 0)
        return -ENOMEM;
    uint64_t h = hash_combine(hash_u64((uint64_t)f.name), (uint64_t)f.file);
    int64_t fi = table_find(&b->function_ix, h, function_eq, b, &f);
    if (fi < 0) {
        if (grow((void **)&b->functions, &b->functions_cap, b->n_functions, sizeof(*b->functions)) ||
            index_add(&b->function_ix, h, b->n_functions))
            return -ENOMEM;
        b->functions[b->n_functions] = f;
        fi = (int64_t)b->n_functions++;
    }
    struct location l = {.function = (uint64_t)fi + 1, .line = line > 0 ? line : 0};
    h = hash_combine(hash_u64(l.function), (uint64_t)l.line);
    int64_t li = table_find(&b->location_ix, h, location_eq, b, &l);
    if (li < 0) {
        if (grow((void **)&b->locations, &b->locations_cap, b->n_locations, sizeof(*b->locations)) ||
            index_add(&b->location_ix, h, b->n_locations))
            return -ENOMEM;
        b->locations[b->n_locations] = l;
        li = (int64_t)b->n_locations++;
    }
    return li + 1;
}

/* A sample's key while it is being added: its locations and labels. */
struct sample_key {
    const uint64_t *locs;
    size_t n_loc;
    const struct label *labels;
    size_t n_label;
};

static int sample_eq(const void *ctx, uint32_t entry, const void *key)
{
    const struct pprof_builder *b = ctx;
    const struct sample_key *k = key;
    const struct sample *s = &b->samples[entry];
    return s->n_loc == k->n_loc && s->n_label == k->n_label &&
           (!k->n_loc || memcmp(&b->locs[s->loc_at], k->locs, k->n_loc * sizeof(*k->locs)) == 0) &&
           (!k->n_label || memcmp(&b->labels[s->label_at], k->labels, k->n_label * sizeof(*k->labels)) == 0);
}

static int64_t sat_add(int64_t a, int64_t b)
{
    if (b > 0 && a > INT64_MAX - b)
        return INT64_MAX;
    if (b < 0 && a < INT64_MIN - b)
        return INT64_MIN;
    return a + b;
}

int pprof_builder_sample(struct pprof_builder *b, const uint64_t *locations, size_t n, const int64_t *values,
                         const struct pprof_label *labels, size_t n_labels)
{
    struct label lab[PPROF_MAX_LABELS];
    if (n_labels > PPROF_MAX_LABELS)
        return -EINVAL;
    for (size_t i = 0; i < n; i++)
        if (locations[i] == 0 || locations[i] > b->n_locations)
            return -EINVAL;
    memset(lab, 0, sizeof(lab)); /* padding-free, but compared with memcmp: keep it defined */
    for (size_t i = 0; i < n_labels; i++) {
        lab[i].key = intern(b, labels[i].key);
        lab[i].str = labels[i].str ? intern(b, labels[i].str) : 0;
        lab[i].num = labels[i].str ? 0 : labels[i].num;
        lab[i].unit = labels[i].str ? 0 : intern(b, labels[i].num_unit);
        if (lab[i].key < 0 || lab[i].str < 0 || lab[i].unit < 0)
            return -ENOMEM;
    }
    struct sample_key k = {.locs = locations, .n_loc = n, .labels = lab, .n_label = n_labels};
    uint64_t h = hash_u64(n);
    for (size_t i = 0; i < n; i++)
        h = hash_combine(h, locations[i]);
    for (size_t i = 0; i < n_labels; i++)
        h = hash_combine(hash_combine(hash_combine(hash_combine(h, (uint64_t)lab[i].key), (uint64_t)lab[i].str),
                                      (uint64_t)lab[i].num),
                         (uint64_t)lab[i].unit);
    int64_t at = table_find(&b->sample_ix, h, sample_eq, b, &k);
    if (at >= 0) {
        int64_t *v = &b->values[b->samples[at].value_at];
        for (size_t i = 0; i < b->n_types; i++)
            v[i] = sat_add(v[i], values[i]);
        return 0;
    }
    while (b->locs_cap < b->n_locs + n)
        if (grow((void **)&b->locs, &b->locs_cap, b->locs_cap, sizeof(*b->locs)))
            return -ENOMEM;
    while (b->labels_cap < b->n_labels + n_labels)
        if (grow((void **)&b->labels, &b->labels_cap, b->labels_cap, sizeof(*b->labels)))
            return -ENOMEM;
    while (b->values_cap < b->n_values + b->n_types)
        if (grow((void **)&b->values, &b->values_cap, b->values_cap, sizeof(*b->values)))
            return -ENOMEM;
    if (grow((void **)&b->samples, &b->samples_cap, b->n_samples, sizeof(*b->samples)) ||
        index_add(&b->sample_ix, h, b->n_samples))
        return -ENOMEM;
    struct sample *s = &b->samples[b->n_samples++];
    *s = (struct sample){
        .loc_at = b->n_locs, .n_loc = n, .label_at = b->n_labels, .n_label = n_labels, .value_at = b->n_values};
    if (n)
        memcpy(&b->locs[b->n_locs], locations, n * sizeof(*locations));
    if (n_labels)
        memcpy(&b->labels[b->n_labels], lab, n_labels * sizeof(*lab));
    memcpy(&b->values[b->n_values], values, b->n_types * sizeof(*values));
    b->n_locs += n;
    b->n_labels += n_labels;
    b->n_values += b->n_types;
    return 0;
}

size_t pprof_builder_samples(const struct pprof_builder *b)
{
    return b->n_samples;
}

size_t pprof_builder_locations(const struct pprof_builder *b)
{
    return b->n_locations;
}

static int gzip(const uint8_t *in, size_t len, uint8_t **out, size_t *out_len)
{
    z_stream z = {0};
    if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return -ENOMEM;
    uLong cap = deflateBound(&z, (uLong)len);
    uint8_t *buf = malloc(cap ? cap : 1);
    if (!buf) {
        deflateEnd(&z);
        return -ENOMEM;
    }
    z.next_in = (Bytef *)in;
    z.avail_in = (uInt)len;
    z.next_out = buf;
    z.avail_out = (uInt)cap;
    int zr = deflate(&z, Z_FINISH);
    *out_len = z.total_out;
    deflateEnd(&z);
    if (zr != Z_STREAM_END) {
        free(buf);
        return -EIO;
    }
    *out = buf;
    return 0;
}

int pprof_builder_encode(const struct pprof_builder *b, uint8_t **out, size_t *len)
{
    *out = NULL;
    *len = 0;
    if (b->n_values > UINT32_MAX || b->n_locs > UINT32_MAX)
        return -ENOMEM;
    int rc = -ENOMEM;
    Vtpin__Pprof__Profile p = VTPIN__PPROF__PROFILE__INIT;
    Vtpin__Pprof__ValueType *vt = calloc(b->n_types, sizeof(*vt));
    Vtpin__Pprof__ValueType **vtp = calloc(b->n_types, sizeof(*vtp));
    Vtpin__Pprof__ValueType period_type = VTPIN__PPROF__VALUE_TYPE__INIT;
    Vtpin__Pprof__Sample *sm = calloc(b->n_samples + 1, sizeof(*sm));
    Vtpin__Pprof__Sample **smp = calloc(b->n_samples + 1, sizeof(*smp));
    Vtpin__Pprof__Label *lb = calloc(b->n_labels + 1, sizeof(*lb));
    Vtpin__Pprof__Label **lbp = calloc(b->n_labels + 1, sizeof(*lbp));
    Vtpin__Pprof__Location *lc = calloc(b->n_locations + 1, sizeof(*lc));
    Vtpin__Pprof__Location **lcp = calloc(b->n_locations + 1, sizeof(*lcp));
    Vtpin__Pprof__Line *ln = calloc(b->n_locations + 1, sizeof(*ln));
    Vtpin__Pprof__Line **lnp = calloc(b->n_locations + 1, sizeof(*lnp));
    Vtpin__Pprof__Function *fn = calloc(b->n_functions + 1, sizeof(*fn));
    Vtpin__Pprof__Function **fnp = calloc(b->n_functions + 1, sizeof(*fnp));
    uint8_t *packed = NULL;
    if (!vt || !vtp || !sm || !smp || !lb || !lbp || !lc || !lcp || !ln || !lnp || !fn || !fnp)
        goto cleanup;
    for (size_t i = 0; i < b->n_types; i++) {
        vtpin__pprof__value_type__init(&vt[i]);
        vt[i].type = b->types[i][0];
        vt[i].unit = b->types[i][1];
        vtp[i] = &vt[i];
    }
    for (size_t i = 0; i < b->n_labels; i++) {
        vtpin__pprof__label__init(&lb[i]);
        lb[i].key = b->labels[i].key;
        lb[i].str = b->labels[i].str;
        lb[i].num = b->labels[i].num;
        lb[i].num_unit = b->labels[i].unit;
        lbp[i] = &lb[i];
    }
    for (size_t i = 0; i < b->n_samples; i++) {
        const struct sample *s = &b->samples[i];
        vtpin__pprof__sample__init(&sm[i]);
        sm[i].n_location_id = s->n_loc;
        sm[i].location_id = &b->locs[s->loc_at];
        sm[i].n_value = b->n_types;
        sm[i].value = &b->values[s->value_at];
        sm[i].n_label = s->n_label;
        sm[i].label = &lbp[s->label_at];
        smp[i] = &sm[i];
    }
    for (size_t i = 0; i < b->n_locations; i++) {
        vtpin__pprof__line__init(&ln[i]);
        ln[i].function_id = b->locations[i].function;
        ln[i].line = b->locations[i].line;
        lnp[i] = &ln[i];
        vtpin__pprof__location__init(&lc[i]);
        lc[i].id = i + 1;
        lc[i].n_line = 1;
        lc[i].line = &lnp[i];
        lcp[i] = &lc[i];
    }
    for (size_t i = 0; i < b->n_functions; i++) {
        vtpin__pprof__function__init(&fn[i]);
        fn[i].id = i + 1;
        fn[i].name = b->functions[i].name;
        fn[i].system_name = b->functions[i].name;
        fn[i].filename = b->functions[i].file;
        fnp[i] = &fn[i];
    }
    p.n_sample_type = b->n_types;
    p.sample_type = vtp;
    p.n_sample = b->n_samples;
    p.sample = smp;
    p.n_location = b->n_locations;
    p.location = lcp;
    p.n_function = b->n_functions;
    p.function = fnp;
    p.n_string_table = b->n_strings;
    p.string_table = b->strings;
    p.time_nanos = b->time_nanos;
    p.duration_nanos = b->duration_nanos;
    period_type.type = b->types[0][0];
    period_type.unit = b->types[0][1];
    p.period_type = &period_type;
    p.period = 1;
    p.n_comment = b->n_comments;
    p.comment = b->comments;
    p.default_sample_type = b->types[0][0];
    size_t size = vtpin__pprof__profile__get_packed_size(&p);
    if (!(packed = malloc(size ? size : 1)))
        goto cleanup;
    if (vtpin__pprof__profile__pack(&p, packed) != size) {
        rc = -EIO;
        goto cleanup;
    }
    rc = gzip(packed, size, out, len);
cleanup:
    free(packed);
    free(vt);
    free(vtp);
    free(sm);
    free(smp);
    free(lb);
    free(lbp);
    free(lc);
    free(lcp);
    free(ln);
    free(lnp);
    free(fn);
    free(fnp);
    return rc;
}

int pprof_gunzip(const uint8_t *data, size_t len, size_t max, uint8_t **out, size_t *out_len)
{
    *out = NULL;
    *out_len = 0;
    z_stream z = {0};
    if (inflateInit2(&z, 15 + 16) != Z_OK)
        return -ENOMEM;
    size_t cap = len * 4 + 64;
    if (cap > max)
        cap = max + 1;
    uint8_t *buf = malloc(cap);
    int rc = buf ? 0 : -ENOMEM;
    z.next_in = (Bytef *)data;
    z.avail_in = (uInt)len;
    while (!rc) {
        if (z.total_out == cap) {
            if (cap > max) {
                rc = -EFBIG;
                break;
            }
            size_t ncap = cap * 2 > max + 1 ? max + 1 : cap * 2;
            uint8_t *nb = realloc(buf, ncap);
            if (!nb) {
                rc = -ENOMEM;
                break;
            }
            buf = nb;
            cap = ncap;
        }
        z.next_out = buf + z.total_out;
        z.avail_out = (uInt)(cap - z.total_out);
        int zr = inflate(&z, Z_NO_FLUSH);
        if (zr == Z_STREAM_END)
            break;
        if (zr != Z_OK && !(zr == Z_BUF_ERROR && z.avail_out == 0))
            rc = -EPROTO;
    }
    if (!rc && z.total_out > max)
        rc = -EFBIG;
    *out_len = z.total_out;
    inflateEnd(&z);
    if (rc) {
        free(buf);
        return rc;
    }
    *out = buf;
    return 0;
}
