#include "units.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int units_parse_duration_flags(const char *text, unsigned flags, int64_t *ns)
{
    static const struct {
        const char *suffix;
        double scale;
    } units[] = {{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}, {"m", 60e9}};
    if (!text)
        return -EINVAL;
    /* The number: digits with an optional fraction and exponent, nothing else
     * (no sign, space, hex, inf or nan), checked before strtod sees it. */
    const char *p = text;
    size_t digits = 0;
    for (; isdigit((unsigned char)*p); p++)
        digits++;
    if (*p == '.')
        for (p++; isdigit((unsigned char)*p); p++)
            digits++;
    if (digits == 0)
        return -EINVAL;
    if ((*p == 'e' || *p == 'E') &&
        (isdigit((unsigned char)p[1]) || ((p[1] == '+' || p[1] == '-') && isdigit((unsigned char)p[2])))) {
        for (p += 2; isdigit((unsigned char)*p); p++)
            ;
    }
    char *end = NULL;
    errno = 0;
    double v = strtod(text, &end);
    if (end != p)
        return -EINVAL;
    if (!isfinite(v) || (errno == ERANGE && v > 1))
        return -ERANGE;
    double scale = 0;
    if (*p == '\0') {
        if (v == 0) {
            *ns = 0;
            return 0;
        }
        if (!(flags & UNITS_BARE_MS))
            return -EINVAL; /* a unit is required: 1 what? */
        scale = 1e6;
    }
    for (size_t i = 0; !scale && i < sizeof(units) / sizeof(units[0]); i++)
        if (strcmp(p, units[i].suffix) == 0)
            scale = units[i].scale;
    if (!scale)
        return -EINVAL;
    double r = v * scale;
    if (r >= 9.2e18)
        return -ERANGE;
    *ns = (int64_t)llround(r);
    return 0;
}

int units_parse_duration(const char *text, int64_t *ns)
{
    return units_parse_duration_flags(text, 0, ns);
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

char *units_format_duration(int64_t ns, char *out, size_t cap)
{
    if (ns < 0)
        ns = 0;
    if (ns < 1000)
        snprintf(out, cap, "%lld ns", (long long)ns);
    else if (ns < 1000000)
        snprintf(out, cap, "%.1f us", (double)ns / 1e3);
    else if (ns < 1000000000)
        snprintf(out, cap, "%.1f ms", (double)ns / 1e6);
    else if (ns < 600 * 1000000000LL)
        snprintf(out, cap, "%.2f s", (double)ns / 1e9);
    else if (ns < 3600 * 1000000000LL) /* a hang, an uptime: minutes read better than 2000.00 s */
        snprintf(out, cap, "%lldm%02llds", (long long)(ns / 60000000000LL), (long long)(ns / 1000000000 % 60));
    else
        snprintf(out, cap, "%lldh%02lldm", (long long)(ns / 3600000000000LL), (long long)(ns / 60000000000LL % 60));
    return out;
}

char *units_format_size(uint64_t bytes, char *out, unsigned cap)
{
    static const char *const names[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    unsigned u = 0;
    uint64_t unit = 1;
    while (u + 1 < sizeof(names) / sizeof(names[0]) && bytes >= unit * 1024) {
        unit *= 1024;
        u++;
    }
    if (bytes % unit == 0)
        snprintf(out, cap, "%llu %s", (unsigned long long)(bytes / unit), names[u]);
    else
        snprintf(out, cap, "%.1f %s", (double)bytes / (double)unit, names[u]);
    return out;
}
