/* Loaded with LD_PRELOAD under valgrind 3.19 (Debian 12's) so that callgrind can run hostscope: the Swift
 * runtime calls sigsuspend with a mask in read-only memory, and valgrind's wrapper of rt_sigsuspend writes to
 * the mask it is given, which kills valgrind itself. The copy on the stack is writable; the call is the same.
 *   cc -shared -fPIC -O2 -o sigsuspend_copy.so sigsuspend_copy.c -ldl */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>

int sigsuspend(const sigset_t *mask) {
    static int (*real)(const sigset_t *);
    if (!real) real = (int (*)(const sigset_t *))dlsym(RTLD_NEXT, "sigsuspend");
    sigset_t copy = *mask;
    return real(&copy);
}
