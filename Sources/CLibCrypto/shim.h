#ifndef HOSTSCOPE_CLIBCRYPTO_SHIM_H
#define HOSTSCOPE_CLIBCRYPTO_SHIM_H

// OpenSSL's digests, for SHA-256 at the speed of the CPU's SHA instructions. libssh2 on Debian
// already links this library.
#include <openssl/evp.h>

#endif
