/* libFuzzer target: the collector's query answers (collector/query.c) over
 * JVMs that hostile agents described. The input is a stream of frames (no
 * file magic). A Hello opens a new agent connection (up to 3 at once, the
 * oldest closes; at most 4 JVMs tracked), a Query is answered at once as a
 * query client's would be, every other frame goes to the newest agent
 * connection. Each answer must decode as a QueryReply holding valid JSON. */
#include <stddef.h>
#include <stdint.h>

#include "peer.h"
#include "query.h"
#include "wire.h"

#define CONNS 3

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct peer_collector pc;
    struct peer conns[CONNS];
    size_t n_conns = 0, newest = 0;
    peer_collector_init(&pc, 4);
    for (size_t off = 0; off < size;) {
        size_t len = 0;
        if (wire_frame_ready(data + off, size - off, WIRE_MAX_FRAME_DEFAULT, &len) != 1)
            break;
        const uint8_t *frame = data + off;
        off += len;
        WireEvent *ev = NULL;
        int decoded = wire_decode(frame, len, &ev);
        int body = decoded == 1 ? (int)ev->body_case : 0;
        if (body == VTPIN__V1__EVENT__BODY_QUERY) {
            peer_query(&pc, ev->query);
        } else if (body == VTPIN__V1__EVENT__BODY_HELLO) {
            size_t slot;
            if (n_conns < CONNS) {
                slot = n_conns++;
            } else {
                slot = (newest + 1) % CONNS;
                peer_close(&pc, &conns[slot]);
            }
            peer_open(&pc, &conns[slot]);
            newest = slot;
            if (peer_frame(&pc, &conns[slot], frame, len) != 0)
                peer_close(&pc, &conns[slot]);
        } else if (n_conns && conns[newest].kind == PEER_AGENT) {
            if (peer_frame(&pc, &conns[newest], frame, len) != 0)
                peer_close(&pc, &conns[newest]);
        }
        wire_event_free(ev);
    }
    Vtpin__V1__Query q = VTPIN__V1__QUERY__INIT;
    for (int kind = 0; kind < 2; kind++) {
        q.kind = (Vtpin__V1__Query__Kind)kind;
        peer_query(&pc, &q);
    }
    for (size_t i = 0; i < n_conns; i++)
        peer_close(&pc, &conns[i]);
    peer_query(&pc, &q);
    peer_collector_fini(&pc);
    return 0;
}
