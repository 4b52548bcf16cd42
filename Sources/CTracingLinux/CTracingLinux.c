#define _GNU_SOURCE
#include "CTracingLinux.h"

#if defined(__linux__)
#include <sched.h>

int c_tracing_current_cpu(void) {
    return sched_getcpu();
}
#else
int c_tracing_current_cpu(void) {
    return -1;
}
#endif
