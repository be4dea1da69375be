/* A small single-threaded epoll loop, in the manner of redis' ae.
 *
 * A watch is embedded in its owner (a client, the listener) and passed to
 * the callback. A callback may unwatch any watch, its own included; watches
 * unwatched during a batch get no further events from that batch. The owner
 * must stay allocated until the batch ends: free closed clients in the
 * after_batch hook, never inside a callback. */
#ifndef VTPIN_COLLECTOR_LOOP_H
#define VTPIN_COLLECTOR_LOOP_H

#include <stdint.h>
#include <sys/epoll.h>

struct loop;
struct loop_watch;

typedef void (*loop_cb)(struct loop *l, struct loop_watch *w, uint32_t events);

struct loop_watch {
    int fd;          /* -1 when not watched */
    uint32_t events; /* EPOLLIN, EPOLLOUT */
    loop_cb cb;
    void *data;
};

int loop_new(struct loop **out, unsigned max_events);
void loop_free(struct loop *l);

/* Starts watching fd (the caller keeps owning it). 0 or -errno. */
int loop_watch(struct loop *l, struct loop_watch *w, int fd, uint32_t events, loop_cb cb, void *data);
/* Changes the events of a watched fd. 0 or -errno. */
int loop_rearm(struct loop *l, struct loop_watch *w, uint32_t events);
/* Stops watching (before closing the fd); safe on an unwatched watch. */
void loop_unwatch(struct loop *l, struct loop_watch *w);

/* Runs until loop_stop; after_batch runs after every batch of events.
 * 0, or -errno when epoll_wait fails. */
int loop_run(struct loop *l, void (*after_batch)(struct loop *l, void *arg), void *arg);
void loop_stop(struct loop *l);

#endif
