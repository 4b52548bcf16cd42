#define _GNU_SOURCE
#include "CTracingLinux.h"

#if defined(__linux__)
#include <sched.h>

int c_tracing_current_cpu(void) {
    return sched_getcpu();
}

int c_tracing_pin_to_cpu(int cpu) {
    if (cpu < 0 || cpu >= CPU_SETSIZE) return -1;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return sched_setaffinity(0, sizeof set, &set) == 0 ? 0 : -1;
}
#else
int c_tracing_current_cpu(void) {
    return -1;
}

int c_tracing_pin_to_cpu(int cpu) {
    (void)cpu;
    return -1;
}
#endif
