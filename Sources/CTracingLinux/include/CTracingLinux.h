#ifndef C_TRACING_LINUX_H
#define C_TRACING_LINUX_H

/// The CPU the calling thread runs on (glibc's `sched_getcpu`, a GNU extension that Swift's Glibc module
/// does not expose), or -1 where it is unavailable. With restartable sequences (glibc 2.35+) it is a
/// load from thread-local memory, cheap enough to call per recorded span.
int c_tracing_current_cpu(void);

#endif
