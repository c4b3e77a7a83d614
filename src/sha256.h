/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * SHA-256 of the state file, as GChecksum computes it, but with the SHA
 * extensions of x86-64 processors (Intel since Goldmont and Ice Lake, AMD
 * since Zen) when the CPU has them: about four times GLib's portable
 * code, which was a fifth of the time to load a state. Other CPUs use
 * GChecksum.
 */
#pragma once

#include <glib.h>

#define SHA256_HEX_SIZE 65  /* 64 lowercase hex digits and a NUL */

typedef struct Sha256 {
	GChecksum *portable;  /* used when the CPU has no SHA extensions */
	guint32 h[8];
	guint8 block[64];     /* a partial block waiting for more data */
	gsize buffered;
	guint64 total;        /* bytes hashed */
} Sha256;

void sha256_init(Sha256 *sha);
void sha256_update(Sha256 *sha, const void *data, gsize len);
/* The digest in lowercase hex; the hasher is cleared after. */
void sha256_finish_hex(Sha256 *sha, char hex[SHA256_HEX_SIZE]);
/* Frees what an unfinished hasher holds. */
void sha256_clear(Sha256 *sha);

/* Whether sha256_init() picks the SHA extensions on this CPU. */
gboolean sha256_accelerated(void);
/* For tests: FALSE makes sha256_init() use GChecksum; TRUE restores the default. */
void sha256_allow_cpu(gboolean allow);

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(Sha256, sha256_clear)
