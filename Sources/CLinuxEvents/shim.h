#ifndef HOSTSCOPE_CLINUXEVENTS_SHIM_H
#define HOSTSCOPE_CLINUXEVENTS_SHIM_H

// Linux's epoll and eventfd, which Swift's Glibc module leaves out. Only the SSH engine's I/O
// threads use them; the flag values are re-exported as plain ints so call sites stay free of
// C enum types.

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <stdint.h>

static inline int hostscope_epoll_create(void) { return epoll_create1(EPOLL_CLOEXEC); }

static inline int hostscope_eventfd_create(void) { return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }

static inline uint32_t hostscope_epoll_in(void) { return EPOLLIN; }
static inline uint32_t hostscope_epoll_out(void) { return EPOLLOUT; }
static inline uint32_t hostscope_epoll_rdhup(void) { return EPOLLRDHUP; }
static inline uint32_t hostscope_epoll_hup(void) { return EPOLLHUP; }
static inline uint32_t hostscope_epoll_err(void) { return EPOLLERR; }

/// Adds, changes (op 1, 3) or removes (op 2) `fd` in the set, tagged with `token`.
static inline int hostscope_epoll_control(int epoll, int op, int fd, uint32_t events, uint64_t token) {
    struct epoll_event event;
    event.events = events;
    event.data.u64 = token;
    return epoll_ctl(epoll, op, fd, &event);
}

/// Waits for events; writes each ready descriptor's token and events into the two arrays.
static inline int hostscope_epoll_wait(int epoll, uint64_t *tokens, uint32_t *events, int capacity, int timeout) {
    struct epoll_event ready[256];
    if (capacity > 256) capacity = 256;
    int count = epoll_wait(epoll, ready, capacity, timeout);
    for (int i = 0; i < count; i++) {
        tokens[i] = ready[i].data.u64;
        events[i] = ready[i].events;
    }
    return count;
}

#endif
