/* libFuzzer target: one collector connection (collector/framer.c, session.c,
 * jvms.c) fed the bytes a peer sends, as the daemon reads them. The first
 * input byte picks the read size (1 to 256 bytes, or whole 64 KiB reads);
 * the rest is the stream: frames without a file magic, e.g. an agent's Hello,
 * definitions, pins and transitions, or a Query. Afterwards STATUS and TOP
 * are answered over what the connection left. */
#include <stddef.h>
#include <stdint.h>

#include "peer.h"
#include "query.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t chunk = data[0] == 0xff ? 64 * 1024 : (size_t)data[0] + 1;
    struct peer_collector pc;
    struct peer p;
    peer_collector_init(&pc, 4);
    peer_open(&pc, &p);
    int rc = peer_feed(&pc, &p, data + 1, size - 1, chunk);
    (void)rc; /* rejected or EOF: either way the connection ends */
    peer_tick(&pc);
    Vtpin__V1__Query q = VTPIN__V1__QUERY__INIT;
    q.kind = VTPIN__V1__QUERY__KIND__TOP;
    peer_query(&pc, &q); /* while it is connected */
    peer_close(&pc, &p);
    q.kind = VTPIN__V1__QUERY__KIND__STATUS;
    peer_query(&pc, &q); /* and after, lingering */
    peer_collector_fini(&pc);
    return 0;
}
