#ifndef HOSTSCOPE_CLIBCRYPTO_SHIM_H
#define HOSTSCOPE_CLIBCRYPTO_SHIM_H

// OpenSSL's digests, for SHA-256 at the speed of the CPU's SHA instructions, and its random
// generator, which libssh2 (on Debian linked with this same library) draws on. Both are only
// called through the Digests module.
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#endif
