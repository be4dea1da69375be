#include "units.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int units_parse_duration(const char *text, int64_t *ns)
{
    static const struct {
        const char *suffix;
        double scale;
    } units[] = {{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}, {"m", 60e9}};
    if (!text || !*text || isspace((unsigned char)text[0]) || text[0] == '-' || text[0] == '+')
        return -EINVAL;
    char *end = NULL;
    errno = 0;
    double v = strtod(text, &end);
    if (end == text || errno == ERANGE || !isfinite(v) || v < 0)
        return errno == ERANGE ? -ERANGE : -EINVAL;
    if (*end == '\0') {
        if (v != 0)
            return -EINVAL; /* a unit is required: 1 what? */
        *ns = 0;
        return 0;
    }
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        if (strcmp(end, units[i].suffix) == 0) {
            double r = v * units[i].scale;
            if (r >= 9.2e18)
                return -ERANGE;
            *ns = (int64_t)llround(r);
            return 0;
        }
    }
    return -EINVAL;
}

int units_parse_size(const char *text, uint64_t *bytes)
{
    if (!text || !isdigit((unsigned char)text[0]))
        return -EINVAL;
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno == ERANGE)
        return -ERANGE;
    unsigned shift = 0;
    switch (*end) {
    case '\0':
        break;
    case 'k':
    case 'K':
        shift = 10;
        end++;
        break;
    case 'm':
    case 'M':
        shift = 20;
        end++;
        break;
    case 'g':
    case 'G':
        shift = 30;
        end++;
        break;
    default:
        return -EINVAL;
    }
    if (shift && (strcmp(end, "iB") == 0 || strcmp(end, "B") == 0))
        end += strlen(end);
    if (*end)
        return -EINVAL;
    if (shift && v > (UINT64_MAX >> shift))
        return -ERANGE;
    *bytes = (uint64_t)v << shift;
    return 0;
}

int units_parse_count(const char *text, uint64_t min, uint64_t max, uint64_t *out)
{
    if (!text || !isdigit((unsigned char)text[0]))
        return -EINVAL;
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (*end)
        return -EINVAL;
    if (errno == ERANGE || v < min || v > max)
        return -ERANGE;
    *out = v;
    return 0;
}

char *units_format_duration(int64_t ns, char *out, unsigned cap)
{
    if (ns < 0)
        ns = 0;
    if (ns < 1000000)
        snprintf(out, cap, "%.0fus", (double)ns / 1e3);
    else if (ns < 1000000000)
        snprintf(out, cap, "%.0fms", (double)ns / 1e6);
    else if (ns < 60000000000LL)
        snprintf(out, cap, "%.1fs", (double)ns / 1e9);
    else if (ns < 3600000000000LL)
        snprintf(out, cap, "%lldm%02llds", (long long)(ns / 60000000000LL), (long long)(ns / 1000000000 % 60));
    else
        snprintf(out, cap, "%lldh%02lldm", (long long)(ns / 3600000000000LL), (long long)(ns / 60000000000LL % 60));
    return out;
}
