/* Decoding the strings a recording carries: UTF-8 as the JVM writes it
 * ("modified UTF-8": NUL as C0 80, supplementary characters as surrogate
 * pairs) or garbage. Nothing here allocates. */
#ifndef VTPIN_COMMON_UTF8_H
#define VTPIN_COMMON_UTF8_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define UTF8_REPLACEMENT 0xFFFDu

/* Decodes the code point at s (n > 0 bytes available) into *cp and returns
 * how many bytes it used (at least 1). Accepts standard UTF-8, C0 80 for
 * U+0000 and a CESU-8 surrogate pair for a supplementary character. An
 * invalid or cut sequence yields UTF8_REPLACEMENT and consumes its maximal
 * valid prefix (at least one byte), so each bad sequence maps to one U+FFFD. */
size_t utf8_decode(const unsigned char *s, size_t n, uint32_t *cp, int *valid);

/* Standard UTF-8 for cp (<= 0x10FFFF, not a surrogate) into out[4]; returns the length. */
size_t utf8_encode(uint32_t cp, char out[4]);

/* The one escaping rule of every text output (the text and collapsed
 * reports, the agent's trace, status, top): valid UTF-8 as is, control
 * characters (C0 with NUL, i.e. modified UTF-8's C0 80, DEL, C1) as \xNN,
 * U+2028, U+2029 and the bidirectional overrides as \uNNNN, so a name cannot
 * drive the terminal, reorder the text or end a line; invalid sequences as
 * U+FFFD. A backslash is
 * left as it is (the JSON report is the exact form). */

/* Writes s so escaped. */
void utf8_write_printable(FILE *out, const char *s);

/* s so escaped into out[cap] (cap > 0), terminated, cut only between
 * characters when it does not fit; returns out. No allocation (the agent's
 * trace uses it). */
char *utf8_printable(const char *s, char *out, size_t cap);

#endif
