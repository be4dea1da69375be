#include "loop.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

struct loop {
    int epfd;
    int stop;
    unsigned max_events;
    struct epoll_event *fired;
    /* the batch being dispatched: unwatch clears a watch's entries in it */
    int nfired;
};

int loop_new(struct loop **out, unsigned max_events)
{
    struct loop *l = calloc(1, sizeof(*l));
    int rc;
    if (!l)
        return -ENOMEM;
    l->epfd = -1;
    l->max_events = max_events ? max_events : 64;
    l->fired = calloc(l->max_events, sizeof(*l->fired));
    if (!l->fired) {
        rc = -ENOMEM;
        goto cleanup;
    }
    l->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (l->epfd < 0) {
        rc = -errno;
        goto cleanup;
    }
    *out = l;
    return 0;
cleanup:
    loop_free(l);
    return rc;
}

void loop_free(struct loop *l)
{
    if (!l)
        return;
    if (l->epfd >= 0)
        close(l->epfd);
    free(l->fired);
    free(l);
}

int loop_watch(struct loop *l, struct loop_watch *w, int fd, uint32_t events, loop_cb cb, void *data)
{
    struct epoll_event ev = {.events = events, .data.ptr = w};
    if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev) != 0)
        return -errno;
    w->fd = fd;
    w->events = events;
    w->cb = cb;
    w->data = data;
    return 0;
}

int loop_rearm(struct loop *l, struct loop_watch *w, uint32_t events)
{
    if (w->fd < 0)
        return -EBADF;
    if (events == w->events)
        return 0;
    struct epoll_event ev = {.events = events, .data.ptr = w};
    if (epoll_ctl(l->epfd, EPOLL_CTL_MOD, w->fd, &ev) != 0)
        return -errno;
    w->events = events;
    return 0;
}

void loop_unwatch(struct loop *l, struct loop_watch *w)
{
    if (w->fd < 0)
        return;
    epoll_ctl(l->epfd, EPOLL_CTL_DEL, w->fd, NULL);
    w->fd = -1;
    w->events = 0;
    /* events of this batch for w must not be dispatched: the owner may be freed after the batch */
    for (int i = 0; i < l->nfired; i++)
        if (l->fired[i].data.ptr == w)
            l->fired[i].data.ptr = NULL;
}

void loop_stop(struct loop *l)
{
    l->stop = 1;
}

int loop_run(struct loop *l, void (*after_batch)(struct loop *l, void *arg), void *arg)
{
    while (!l->stop) {
        int n = epoll_wait(l->epfd, l->fired, (int)l->max_events, -1);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        l->nfired = n;
        for (int i = 0; i < n; i++) {
            struct loop_watch *w = l->fired[i].data.ptr;
            if (!w || w->fd < 0)
                continue;
            /* report only what is asked for, plus errors and hang-ups */
            uint32_t ev = l->fired[i].events & (w->events | EPOLLERR | EPOLLHUP | EPOLLRDHUP);
            if (ev)
                w->cb(l, w, ev);
        }
        l->nfired = 0;
        if (after_batch)
            after_batch(l, arg);
    }
    return 0;
}
