/* One pin as the Java API's text record (api_pins.h keeps them; dev.vtpin.Vtpin parses
 * them), one line each, fields split by tabs (tabs and line ends in names become spaces):
 *   pin ID REASON START_NS DURATION_NS(-1: in progress) VTHREAD_ID VTHREAD CARRIER
 *       ORIGIN(app|jdk) CULPRIT(-1: none) TRUNCATED(0|1) JDK_WORDS BLOCKER LIBRARY
 *   frame CLASS METHOD TEXT            (top frame first; TEXT as the trace shows it)
 * Writer thread only (it reads the symbol tables). */
#ifndef VTPIN_API_RECORD_H
#define VTPIN_API_RECORD_H

#include "blocker.h"
#include "symbols.h"
#include "trace.h"

/* A malloc'd string (NULL: out of memory); b may be NULL. */
char *api_record_format(struct symbols *s, const struct pin_view *p, const struct blocker *b);

#endif
