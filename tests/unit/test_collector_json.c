/* Unit tests for common/jsonread.c, the reader `vtpin status` and `vtpin top`
 * use for the collector's answers: values, escapes, 64-bit integers, and
 * refusal of malformed or too deeply nested input. */
#include "common/jsonread.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static struct jsonread *parse(const char *text)
{
    struct jsonread *v = NULL;
    char err[128];
    if (jsonread_parse(text, strlen(text), &v, err, sizeof(err)) != 0)
        return NULL;
    return v;
}

static int refused(const char *text)
{
    struct jsonread *v = NULL;
    char err[128] = "";
    int rc = jsonread_parse(text, strlen(text), &v, err, sizeof(err));
    jsonread_free(v);
    return rc == -EINVAL && strstr(err, "invalid JSON at offset") != NULL;
}

static void test_values(void)
{
    struct jsonread *v =
        parse(" {\"a\": 1, \"b\": [true, false, null, -2.5, \"x\"], \"c\": {\"d\": 9223372036854775807},"
              " \"e\": 1796014819132361818, \"f\": 12.0, \"g\": 1e3} ");
    if (!CHECK(v))
        return;
    CHECK_INT(jsonread_int(jsonread_get(v, "a"), 0), 1);
    const struct jsonread *b = jsonread_get(v, "b");
    CHECK_UINT(jsonread_len(b), 5);
    CHECK(jsonread_bool(jsonread_at(b, 0), 0));
    CHECK(!jsonread_bool(jsonread_at(b, 1), 1));
    CHECK(jsonread_is_null(jsonread_at(b, 2)));
    CHECK(jsonread_num(jsonread_at(b, 3), 0) == -2.5);
    CHECK_STR(jsonread_str(jsonread_at(b, 4), NULL), "x");
    CHECK(jsonread_at(b, 5) == NULL);
    CHECK_INT(jsonread_int(jsonread_get(jsonread_get(v, "c"), "d"), 0), INT64_MAX);
    CHECK_INT(jsonread_int(jsonread_get(v, "e"), 0), 1796014819132361818LL); /* exact, not via double */
    CHECK_INT(jsonread_int(jsonread_get(v, "f"), 0), 12);
    CHECK_INT(jsonread_int(jsonread_get(v, "g"), 0), 1000);
    /* absent and wrong types read as defaults */
    CHECK(jsonread_get(v, "zz") == NULL);
    CHECK(jsonread_is_null(jsonread_get(v, "zz")));
    CHECK_STR(jsonread_str(jsonread_get(v, "a"), "dflt"), "dflt");
    CHECK_INT(jsonread_int(jsonread_get(v, "b"), -7), -7);
    CHECK_UINT(jsonread_len(jsonread_get(v, "a")), 0);
    CHECK(jsonread_get(jsonread_get(v, "zz"), "x") == NULL);
    jsonread_free(v);
    jsonread_free(NULL);
}

static void test_strings(void)
{
    struct jsonread *v = parse("[\"a\\\"b\\\\c\\/d\\n\\t\", \"\\u00e9\\u20ac\", \"\\ud83d\\ude00\", \"\\u0000x\", "
                               "\"\\ud800\", \"h\xc3\xa4st\", \"\"]");
    if (!CHECK(v))
        return;
    CHECK_STR(jsonread_str(jsonread_at(v, 0), NULL), "a\"b\\c/d\n\t");
    CHECK_STR(jsonread_str(jsonread_at(v, 1), NULL), "\xc3\xa9\xe2\x82\xac");
    CHECK_STR(jsonread_str(jsonread_at(v, 2), NULL), "\xf0\x9f\x98\x80");
    CHECK_STR(jsonread_str(jsonread_at(v, 3), NULL), "\xc0\x80x");    /* NUL becomes modified UTF-8's C0 80 */
    CHECK_STR(jsonread_str(jsonread_at(v, 4), NULL), "\xef\xbf\xbd"); /* lone surrogate */
    CHECK_STR(jsonread_str(jsonread_at(v, 5), NULL), "h\xc3\xa4st");
    CHECK_STR(jsonread_str(jsonread_at(v, 6), NULL), "");
    jsonread_free(v);
}

static void test_refused(void)
{
    CHECK(refused(""));
    CHECK(refused("{"));
    CHECK(refused("{\"a\" 1}"));
    CHECK(refused("{\"a\": 1,}"));
    CHECK(refused("[1 2]"));
    CHECK(refused("[1,]"));
    CHECK(refused("{1: 2}"));
    CHECK(refused("\"abc"));
    CHECK(refused("\"a\nb\""));
    CHECK(refused("\"\\x\""));
    CHECK(refused("\"\\u12g4\""));
    CHECK(refused("tru"));
    CHECK(refused("nul"));
    CHECK(refused("-"));
    CHECK(refused("1.2.3"));
    CHECK(refused("{} {}"));
    CHECK(refused("[\"unterminated"));
    char deep[200];
    memset(deep, '[', 100);
    memset(deep + 100, ']', 100);
    struct jsonread *v = NULL;
    char err[128];
    CHECK_INT(jsonread_parse(deep, sizeof(deep), &v, err, sizeof(err)), -EINVAL);
    CHECK_CONTAINS(err, "nested too deeply");
    memset(deep, '[', 60);
    memset(deep + 60, ']', 60);
    CHECK_INT(jsonread_parse(deep, 120, &v, err, sizeof(err)), 0);
    jsonread_free(v);
}

int main(void)
{
    CHECK_RUN(test_values);
    CHECK_RUN(test_strings);
    CHECK_RUN(test_refused);
    CHECK_MAIN_RETURN();
}
