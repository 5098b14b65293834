/*
 * sha256: SHA-256 (FIPS 180-4), to check that a file is the one whose
 * digest was recorded (the reproducer a window names).
 */
#ifndef SPYREMON_SHA256_H
#define SPYREMON_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_LEN	32
#define SHA256_HEXLEN	(2 * SHA256_LEN + 1)	/* with the NUL */

struct sha256 {
	uint32_t h[8];
	uint8_t	 buf[64];
	size_t	 nbuf;
	uint64_t bytes;
};

/* Start a digest. */
void sha256_init(struct sha256 *s);
/* Add n bytes of p. */
void sha256_update(struct sha256 *s, const void *p, size_t n);
/* The digest of everything added, in lower-case hex; s is used up. */
void sha256_hex(struct sha256 *s, char hex[SHA256_HEXLEN]);

#endif
