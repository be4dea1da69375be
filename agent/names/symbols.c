#include "symbols.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "common/table.h"

#include "bytecode.h"
#include "natives.h"

struct string_entry {
    char *text;
    unsigned sent;
};

struct symbols {
    jvmtiEnv *jvmti;
    unsigned max_methods, max_stacks, max_strings;
    /* ids are 1-based indexes into these arrays; each has a fixed index, allocated in
     * symbols_new for its max entries (common/table.h: item = id - 1) */
    struct method_info **methods;
    uint32_t method_count, method_cap;
    struct table method_ix; /* by jmethodID */
    struct stack_info **stacks;
    uint32_t stack_count, stack_cap;
    struct table stack_ix; /* by frames and monitors */
    struct string_entry *strings;
    uint32_t string_count, string_cap;
    struct table string_ix; /* by text */
    uint64_t stacks_dropped;
    uint64_t methods_dropped; /* frames left unnamed: the method table was full */
    jmethodID module_get_name;
    int infer_monitors;
};

struct symbols *symbols_new(jvmtiEnv *jvmti, unsigned max_methods, unsigned max_stacks, int infer_monitors)
{
    struct symbols *s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    s->jvmti = jvmti;
    s->infer_monitors = infer_monitors;
    s->max_methods = max_methods;
    s->max_stacks = max_stacks;
    s->max_strings = max_methods * 4 + max_stacks;
    if (table_init(&s->method_ix, max_methods, TABLE_FIXED) || table_init(&s->stack_ix, max_stacks, TABLE_FIXED) ||
        table_init(&s->string_ix, s->max_strings, TABLE_FIXED)) {
        symbols_free(s);
        return NULL;
    }
    return s;
}

void symbols_free(struct symbols *s)
{
    if (!s)
        return;
    for (uint32_t i = 0; i < s->method_count; i++) {
        if (s->methods[i]->lines)
            (*s->jvmti)->Deallocate(s->jvmti, (unsigned char *)s->methods[i]->lines);
        if (s->methods[i]->code)
            (*s->jvmti)->Deallocate(s->jvmti, s->methods[i]->code);
        free(s->methods[i]);
    }
    for (uint32_t i = 0; i < s->stack_count; i++) {
        free(s->stacks[i]->mids);
        free(s->stacks[i]->raw_monitors);
        free(s->stacks[i]->frames);
        free(s->stacks[i]);
    }
    for (uint32_t i = 0; i < s->string_count; i++)
        free(s->strings[i].text);
    free(s->methods);
    free(s->stacks);
    free(s->strings);
    table_fini(&s->method_ix);
    table_fini(&s->stack_ix);
    table_fini(&s->string_ix);
    free(s);
}

/* Grows a pointer array by doubling; returns 0 or -ENOMEM. */
static int grow(void **arr, uint32_t *cap, size_t elem)
{
    uint32_t ncap = *cap ? *cap * 2 : 64;
    void *n = realloc(*arr, (size_t)ncap * elem);
    if (!n)
        return -ENOMEM;
    *arr = n;
    *cap = ncap;
    return 0;
}

static int string_eq(const void *ctx, uint32_t item, const void *key)
{
    const struct symbols *s = ctx;
    return strcmp(s->strings[item].text, key) == 0;
}

uint32_t symbols_string(struct symbols *s, const char *text)
{
    if (!text)
        return 0;
    uint64_t h = hash_string(text);
    int64_t at = table_find(&s->string_ix, h, string_eq, s, text);
    if (at >= 0)
        return (uint32_t)at + 1;
    if (s->string_count >= s->max_strings)
        return 0;
    if (s->string_count == s->string_cap && grow((void **)&s->strings, &s->string_cap, sizeof(*s->strings)))
        return 0;
    char *copy = strdup(text);
    if (!copy)
        return 0;
    s->strings[s->string_count] = (struct string_entry){copy, 0};
    (void)table_add(&s->string_ix, h, s->string_count); /* room: string_count < max_strings */
    return ++s->string_count;
}

const char *symbols_string_text(const struct symbols *s, uint32_t id)
{
    return id && id <= s->string_count ? s->strings[id - 1].text : NULL;
}

unsigned *symbols_string_sent(struct symbols *s, uint32_t id)
{
    return id && id <= s->string_count ? &s->strings[id - 1].sent : NULL;
}

static uint32_t module_name(struct symbols *s, JNIEnv *jni, jclass cls)
{
    if (!jni)
        return 0;
    jobject module = (*jni)->GetModule(jni, cls);
    if (!module) {
        (*jni)->ExceptionClear(jni);
        return 0;
    }
    if (!s->module_get_name) {
        jclass mc = (*jni)->GetObjectClass(jni, module);
        s->module_get_name = (*jni)->GetMethodID(jni, mc, "getName", "()Ljava/lang/String;");
        (*jni)->DeleteLocalRef(jni, mc);
    }
    uint32_t sid = 0;
    jstring name = s->module_get_name ? (jstring)(*jni)->CallObjectMethod(jni, module, s->module_get_name) : NULL;
    if ((*jni)->ExceptionCheck(jni))
        (*jni)->ExceptionClear(jni);
    if (name) {
        const char *utf = (*jni)->GetStringUTFChars(jni, name, NULL);
        if (utf) {
            sid = symbols_string(s, utf);
            (*jni)->ReleaseStringUTFChars(jni, name, utf);
        }
        (*jni)->DeleteLocalRef(jni, name);
    }
    (*jni)->DeleteLocalRef(jni, module);
    return sid;
}

static struct method_info *method_load(struct symbols *s, JNIEnv *jni, jmethodID mid)
{
    jvmtiEnv *jvmti = s->jvmti;
    jclass cls = NULL;
    char *name = NULL, *sig = NULL, *csig = NULL, *source = NULL;
    struct method_info *m = NULL;
    if ((*jvmti)->GetMethodDeclaringClass(jvmti, mid, &cls) != JVMTI_ERROR_NONE)
        return NULL;
    if ((*jvmti)->GetMethodName(jvmti, mid, &name, &sig, NULL) != JVMTI_ERROR_NONE ||
        (*jvmti)->GetClassSignature(jvmti, cls, &csig, NULL) != JVMTI_ERROR_NONE)
        goto cleanup;
    m = calloc(1, sizeof(*m));
    if (!m)
        goto cleanup;
    m->mid = mid;
    char dotted[512];
    bytecode_class_name(csig, dotted, sizeof(dotted));
    m->class_sid = symbols_string(s, dotted);
    m->name_sid = symbols_string(s, name);
    m->sig_sid = symbols_string(s, sig);
    if ((*jvmti)->GetSourceFileName(jvmti, cls, &source) == JVMTI_ERROR_NONE)
        m->source_sid = symbols_string(s, source);
    m->module_sid = module_name(s, jni, cls);
    jboolean native = JNI_FALSE;
    (*jvmti)->IsMethodNative(jvmti, mid, &native);
    m->is_native = native;
    m->kind = (int)frames_classify(dotted, name, native);
    if (native) {
        const char *lib = natives_library(natives_get(mid));
        if (!lib)
            lib = natives_library_by_name(dotted, name);
        m->library_sid = symbols_string(s, lib);
    } else if ((*jvmti)->GetLineNumberTable(jvmti, mid, &m->line_count, &m->lines) != JVMTI_ERROR_NONE) {
        m->line_count = 0;
        m->lines = NULL;
    }
    jint modifiers = 0;
    if ((*jvmti)->GetMethodModifiers(jvmti, mid, &modifiers) == JVMTI_ERROR_NONE)
        m->is_synchronized = (modifiers & 0x0020) != 0; /* ACC_SYNCHRONIZED */
    if (s->infer_monitors && !native &&
        (*jvmti)->GetBytecodes(jvmti, mid, &m->code_len, &m->code) != JVMTI_ERROR_NONE) {
        m->code = NULL;
        m->code_len = 0;
    }
cleanup:
    (*jvmti)->Deallocate(jvmti, (unsigned char *)name);
    (*jvmti)->Deallocate(jvmti, (unsigned char *)sig);
    (*jvmti)->Deallocate(jvmti, (unsigned char *)csig);
    (*jvmti)->Deallocate(jvmti, (unsigned char *)source);
    if (jni && cls)
        (*jni)->DeleteLocalRef(jni, cls);
    return m;
}

static int method_eq(const void *ctx, uint32_t item, const void *key)
{
    const struct symbols *s = ctx;
    return s->methods[item]->mid == *(const jmethodID *)key;
}

static uint32_t method_id(struct symbols *s, JNIEnv *jni, jmethodID mid)
{
    uint64_t h = hash_u64((uint64_t)(uintptr_t)mid);
    int64_t at = table_find(&s->method_ix, h, method_eq, s, &mid);
    if (at >= 0)
        return (uint32_t)at + 1;
    if (s->method_count >= s->max_methods)
        return 0;
    if (s->method_count == s->method_cap && grow((void **)&s->methods, &s->method_cap, sizeof(*s->methods)))
        return 0;
    struct method_info *m = method_load(s, jni, mid);
    if (!m)
        return 0;
    m->id = s->method_count + 1;
    s->methods[s->method_count++] = m;
    (void)table_add(&s->method_ix, h, m->id - 1); /* room: method_count <= max_methods */
    return m->id;
}

struct method_info *symbols_method_by_id(struct symbols *s, uint32_t id)
{
    return id && id <= s->method_count ? s->methods[id - 1] : NULL;
}

static int32_t line_for(const struct method_info *m, int32_t bci)
{
    int32_t line = -1;
    jlocation best = -1;
    for (jint i = 0; i < m->line_count; i++) {
        if (m->lines[i].start_location <= bci && m->lines[i].start_location > best) {
            best = m->lines[i].start_location;
            line = m->lines[i].line_number;
        }
    }
    return line;
}

int symbols_stack_same_frames(const struct stack_info *st, const struct pin_rec *r)
{
    if (!st || st->count != r->frame_count)
        return 0;
    for (uint32_t f = 0; f < st->count; f++)
        if (st->mids[f] != r->frames[f].method || st->frames[f].bci != (int32_t)r->frames[f].location)
            return 0;
    return 1;
}

struct stack_key {
    const struct pin_rec *r;
    const uint16_t *monitors;
    uint64_t hash;
};

static int stack_eq(const void *ctx, uint32_t item, const void *key)
{
    const struct stack_info *st = ((const struct symbols *)ctx)->stacks[item];
    const struct stack_key *k = key;
    return st->hash == k->hash && symbols_stack_same_frames(st, k->r) &&
           memcmp(st->raw_monitors, k->monitors, k->r->frame_count * sizeof(*k->monitors)) == 0;
}

const struct stack_info *symbols_stack(struct symbols *s, JNIEnv *jni, const struct pin_rec *r, unsigned depth)
{
    const jvmtiFrameInfo *frames = r->frames;
    const uint16_t *monitors = pin_rec_monitors_const(r, depth);
    uint32_t n = r->frame_count;
    uint64_t h = hash_u64(n);
    for (uint32_t f = 0; f < n; f++)
        h = hash_combine(
            hash_combine(hash_combine(h, (uint64_t)(uintptr_t)frames[f].method), (uint64_t)frames[f].location),
            monitors[f]);
    struct stack_key key = {r, monitors, h};
    int64_t at = table_find(&s->stack_ix, h, stack_eq, s, &key);
    if (at >= 0)
        return s->stacks[at];
    if (s->stack_count >= s->max_stacks ||
        (s->stack_count == s->stack_cap && grow((void **)&s->stacks, &s->stack_cap, sizeof(*s->stacks)))) {
        s->stacks_dropped++;
        return NULL;
    }
    struct stack_info *st = calloc(1, sizeof(*st));
    if (st) {
        st->mids = calloc(n ? n : 1, sizeof(*st->mids));
        st->raw_monitors = calloc(n ? n : 1, sizeof(*st->raw_monitors));
        st->frames = calloc(n ? n : 1, sizeof(*st->frames));
    }
    if (!st || !st->mids || !st->raw_monitors || !st->frames) {
        if (st) {
            free(st->mids);
            free(st->raw_monitors);
            free(st->frames);
        }
        free(st);
        s->stacks_dropped++;
        return NULL;
    }
    st->hash = h;
    st->count = n;
    st->truncated = r->truncated;
    for (uint32_t f = 0; f < n; f++) {
        st->mids[f] = frames[f].method;
        st->raw_monitors[f] = monitors[f];
        struct stack_frame *sf = &st->frames[f];
        sf->method = method_id(s, jni, frames[f].method);
        if (!sf->method)
            s->methods_dropped++;
        sf->bci = (int32_t)frames[f].location;
        sf->monitors = monitors[f];
        struct method_info *m = symbols_method_by_id(s, sf->method);
        sf->line = m ? line_for(m, sf->bci) : -1;
        if (s->infer_monitors && m && m->code && sf->bci >= 0) {
            int depth = bytecode_monitor_depth(m->code, (size_t)m->code_len, (size_t)sf->bci);
            /* a synchronized method holds its monitor, unless it is only entering it */
            int sync = m->is_synchronized && (f > 0 || sf->bci > 0);
            sf->monitors = (uint16_t)((depth > 0 ? depth : 0) + sync);
        }
    }
    st->id = s->stack_count + 1;
    s->stacks[s->stack_count++] = st;
    (void)table_add(&s->stack_ix, h, st->id - 1); /* room: stack_count <= max_stacks */
    return st;
}

struct stack_info *symbols_stack_by_id(struct symbols *s, uint32_t id)
{
    return id && id <= s->stack_count ? s->stacks[id - 1] : NULL;
}

void symbols_forget_sink(struct symbols *s, unsigned sink_bit)
{
    for (uint32_t i = 0; i < s->string_count; i++)
        s->strings[i].sent &= ~sink_bit;
    for (uint32_t i = 0; i < s->method_count; i++)
        s->methods[i]->sent &= ~sink_bit;
    for (uint32_t i = 0; i < s->stack_count; i++)
        s->stacks[i]->sent &= ~sink_bit;
}

uint64_t symbols_stacks_dropped(const struct symbols *s)
{
    return s->stacks_dropped;
}

uint64_t symbols_methods_dropped(const struct symbols *s)
{
    return s ? s->methods_dropped : 0;
}

/* Names and kinds of the stack's frames, for frames_kind.c; NULL when out of memory. */
static struct frame_name *frame_names(struct symbols *s, const struct stack_info *st)
{
    struct frame_name *names = calloc(st->count ? st->count : 1, sizeof(*names));
    for (uint32_t f = 0; names && f < st->count; f++) {
        struct method_info *m = symbols_method_by_id(s, st->frames[f].method);
        names[f].cls = m ? symbols_string_text(s, m->class_sid) : NULL;
        names[f].method = m ? symbols_string_text(s, m->name_sid) : NULL;
        names[f].kind = m ? m->kind : FRAME_JAVA;
    }
    return names;
}

void symbols_native_site(struct symbols *s, const struct stack_info *st, uint32_t culprit, struct native_site *site,
                         int *blocking)
{
    site->culprit = site->downcall = site->upcall = site->jna = site->jna_function = -1;
    *blocking = -1;
    struct frame_name *names = st ? frame_names(s, st) : NULL;
    if (!names)
        return;
    frames_native_site(names, st->count, site);
    *blocking = frames_blocking(names, st->count, (int)culprit, site->culprit == (int)culprit ? site->upcall : -1);
    free(names);
}

int symbols_rec_has_native(struct symbols *s, JNIEnv *jni, const struct pin_rec *r)
{
    const jvmtiFrameInfo *frames = r->frames;
    struct frame_name *names = calloc(r->frame_count ? r->frame_count : 1, sizeof(*names));
    if (!names)
        return -ENOMEM;
    for (uint32_t f = 0; f < r->frame_count; f++) {
        struct method_info *m = symbols_method_by_id(s, method_id(s, jni, frames[f].method));
        names[f].cls = m ? symbols_string_text(s, m->class_sid) : NULL;
        names[f].method = m ? symbols_string_text(s, m->name_sid) : NULL;
        names[f].kind = m ? m->kind : FRAME_JAVA;
    }
    struct native_site site;
    frames_native_site(names, r->frame_count, &site);
    free(names);
    return site.culprit >= 0;
}

static int top_is_jdk(struct symbols *s, const struct stack_info *st)
{
    struct method_info *m = symbols_method_by_id(s, st->frames[0].method);
    const char *cls = m ? symbols_string_text(s, m->class_sid) : NULL;
    return cls && frames_is_jdk_class(cls);
}

uint32_t symbols_first_app_frame(struct symbols *s, const struct stack_info *st)
{
    for (uint32_t f = 0; st && f < st->count; f++) {
        struct method_info *m = symbols_method_by_id(s, st->frames[f].method);
        const char *cls = m ? symbols_string_text(s, m->class_sid) : NULL;
        if (cls && !frames_is_jdk_class(cls))
            return f;
    }
    return 0;
}

uint32_t symbols_culprit(struct symbols *s, const struct stack_info *st, int reason)
{
    if (!st || st->count == 0)
        return 0;
    int first_app = -1, first_monitor = -1, first_outside_object = -1;
    struct native_site site;
    int blocking;
    symbols_native_site(s, st, 0, &site, &blocking);
    for (uint32_t f = 0; f < st->count; f++) {
        struct method_info *m = symbols_method_by_id(s, st->frames[f].method);
        const char *cls = m ? symbols_string_text(s, m->class_sid) : NULL;
        if (first_monitor < 0 && st->frames[f].monitors > 0)
            first_monitor = (int)f;
        if (first_app < 0 && cls && !frames_is_jdk_class(cls))
            first_app = (int)f;
        if (first_outside_object < 0 && cls && strcmp(cls, "java.lang.Object") != 0)
            first_outside_object = (int)f;
    }
    int pick = -1;
    switch (reason) {
    case REASON_MONITOR:
        pick = first_monitor;
        break;
    case REASON_NATIVE:
    case REASON_NATIVE_BLOCK:
        pick = site.culprit; /* the JNI method, or the frame that invoked the FFM downcall or JNA function */
        break;
    case REASON_MONITOR_ENTER:
        pick = 0; /* the frame entering the monitor */
        break;
    case REASON_VM_BLOCK:
        /* the frame the JVM blocked in (getstatic), or the application's below the JDK's (Class.forName) */
        pick = first_app > 0 && top_is_jdk(s, st) ? first_app : 0;
        break;
    case REASON_OBJECT_WAIT:
        pick = first_outside_object;
        break;
    default:
        pick = first_monitor >= 0 ? first_monitor : site.culprit;
        break;
    }
    if (pick < 0)
        pick = first_app >= 0 ? first_app : 0;
    return (uint32_t)pick;
}

int symbols_infer_reason(struct symbols *s, const struct stack_info *st, int monitors_pin)
{
    if (!st)
        return REASON_UNKNOWN;
    /* The JDK's own order: walking from the top, the first frame that holds a
     * monitor (where monitors pin) or is native (a JNI method, JNA's among
     * them, or an FFM downcall's stub) decides. An upcall that sleeps under a native frame is
     * NATIVE even with a synchronized frame lower down. */
    struct native_site site;
    int blocking;
    symbols_native_site(s, st, 0, &site, &blocking);
    int native_at = site.downcall >= 0 ? site.downcall : site.jna >= 0 ? site.jna : site.culprit;
    for (uint32_t f = 0; f < st->count; f++) {
        if (native_at >= 0 && (int)f >= native_at)
            return REASON_NATIVE;
        if (monitors_pin && st->frames[f].monitors > 0)
            return REASON_MONITOR;
    }
    return REASON_UNKNOWN;
}

const char *symbols_innermost_clinit(struct symbols *s, const struct stack_info *st)
{
    for (uint32_t f = 0; st && f < st->count; f++) {
        struct method_info *m = symbols_method_by_id(s, st->frames[f].method);
        const char *name = m ? symbols_string_text(s, m->name_sid) : NULL;
        if (name && strcmp(name, "<clinit>") == 0)
            return symbols_string_text(s, m->class_sid);
    }
    return NULL;
}
