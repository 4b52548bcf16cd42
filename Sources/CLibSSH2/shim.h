#ifndef HOSTSCOPE_CLIBSSH2_SHIM_H
#define HOSTSCOPE_CLIBSSH2_SHIM_H

#include <libssh2.h>
#include <libssh2_sftp.h>

// libssh2 exposes many entry points as function-like macros, which Swift does not import.
// The module calls the `_ex` forms directly; the few constants it needs as typed values are
// re-exported here so that their C integer types stay out of Swift call sites.

static inline int hostscope_ssh2_error_eagain(void) { return LIBSSH2_ERROR_EAGAIN; }

#endif
