#ifndef C_TRACING_LINUX_H
#define C_TRACING_LINUX_H

/// The CPU the calling thread runs on (glibc's `sched_getcpu`, a GNU extension that Swift's Glibc module
/// does not expose), or -1 where it is unavailable. With restartable sequences (glibc 2.35+) it is a
/// load from thread-local memory, cheap enough to call per recorded span.
int c_tracing_current_cpu(void);

/// Binds the calling thread to one CPU (`sched_setaffinity`), so that tests and benchmarks can choose
/// which CPU's ring a span goes to. Returns 0, or -1 where that is unavailable or refused.
int c_tracing_pin_to_cpu(int cpu);

#endif
