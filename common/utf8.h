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

/* Writes s for a terminal: valid UTF-8 as is, control characters (C0, DEL,
 * C1) as \xNN and bidirectional overrides as \uNNNN, so a recording cannot
 * drive the terminal or reorder the text; invalid sequences as U+FFFD. */
void utf8_write_printable(FILE *out, const char *s);

#endif
