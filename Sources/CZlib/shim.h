#ifndef HOSTSCOPE_CZLIB_SHIM_H
#define HOSTSCOPE_CZLIB_SHIM_H

#include <zlib.h>

// deflateInit2 and inflateInit2 are function-like macros (they pass ZLIB_VERSION and the stream's
// size), which Swift does not import; these wrappers call the underlying functions the same way.

static inline int hostscope_deflate_init_gzip(z_streamp stream, int level) {
    // 15 window bits + 16: write a gzip header and trailer instead of a zlib one; memLevel 8 is the default.
    return deflateInit2(stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
}

static inline int hostscope_inflate_init_gzip(z_streamp stream) {
    // 15 window bits + 16: accept only a gzip stream.
    return inflateInit2(stream, 15 + 16);
}

#endif
