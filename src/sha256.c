/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * SHA-256 (FIPS 180-4) with the x86 SHA extensions, GChecksum elsewhere.
 *
 * The extensions keep the eight working variables in two registers
 * (ABEF and CDGH); sha256rnds2 does two rounds, sha256msg1/msg2 extend
 * the message schedule four words at a time. Data is buffered into whole
 * 64-byte blocks, and the padding and the digest are the standard ones,
 * so the result is GChecksum's byte for byte (the tests compare the two).
 */
#include "config.h"

#include "sha256.h"

#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#define HAVE_SHA_NI 1
#include <cpuid.h>
#include <immintrin.h>
#endif

static const guint32 initial_h[8] = {
	0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
	0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
};

static gint cpu_allowed = 1;

#ifdef HAVE_SHA_NI
static const guint32 round_k[64] __attribute__((aligned(16))) = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
	0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
	0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

/* The SHA extensions, and SSSE3 and SSE4.1 for the shuffles around them. */
static gboolean
cpu_has_sha(void)
{
	unsigned int a, b, c, d;

	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_SSSE3) || !(c & bit_SSE4_1))
		return FALSE;
	return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & bit_SHA);
}

/* Hashes n whole blocks into h. */
__attribute__((target("sha,ssse3,sse4.1")))
static void
blocks_sha_ni(guint32 h[8], const guint8 *data, gsize n)
{
	/* Big-endian words: reverse the bytes of each 32-bit lane. */
	const __m128i bswap = _mm_set_epi64x(0x0c0d0e0f08090a0bLL, 0x0405060700010203LL);
	__m128i abef, cdgh, tmp;

	/* h is A..H in order; the instructions want ABEF and CDGH. */
	tmp = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)(const void *)&h[0]), 0xB1);
	cdgh = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)(const void *)&h[4]), 0x1B);
	abef = _mm_alignr_epi8(tmp, cdgh, 8);
	cdgh = _mm_blend_epi16(cdgh, tmp, 0xF0);

	for (; n > 0; n--, data += 64) {
		const __m128i abef_in = abef, cdgh_in = cdgh;
		__m128i w[4];

		/* 16 groups of 4 rounds; w[g % 4] holds the schedule words 4g .. 4g + 3. */
		for (int g = 0; g < 16; g++) {
			__m128i m;

			if (g < 4) {
				w[g] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(const void *)
									(data + 16 * g)), bswap);
			} else {
				/* W[t] = s1(W[t-2]) + W[t-7] + s0(W[t-15]) + W[t-16] */
				m = _mm_sha256msg1_epu32(w[g & 3], w[(g + 1) & 3]);
				m = _mm_add_epi32(m, _mm_alignr_epi8(w[(g + 3) & 3], w[(g + 2) & 3], 4));
				w[g & 3] = _mm_sha256msg2_epu32(m, w[(g + 3) & 3]);
			}
			m = _mm_add_epi32(w[g & 3], _mm_load_si128((const __m128i *)(const void *)
								   &round_k[4 * g]));
			cdgh = _mm_sha256rnds2_epu32(cdgh, abef, m);
			abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32(m, 0x0E));
		}
		abef = _mm_add_epi32(abef, abef_in);
		cdgh = _mm_add_epi32(cdgh, cdgh_in);
	}

	tmp = _mm_shuffle_epi32(abef, 0x1B);
	cdgh = _mm_shuffle_epi32(cdgh, 0xB1);
	_mm_storeu_si128((__m128i *)(void *)&h[0], _mm_blend_epi16(tmp, cdgh, 0xF0));
	_mm_storeu_si128((__m128i *)(void *)&h[4], _mm_alignr_epi8(cdgh, tmp, 8));
}

gboolean
sha256_accelerated(void)
{
	static gsize answer;  /* 0 not asked yet, 1 no, 2 yes */

	if (g_once_init_enter(&answer))
		g_once_init_leave(&answer, cpu_has_sha() ? 2 : 1);
	return answer == 2 && g_atomic_int_get(&cpu_allowed);
}
#else
gboolean
sha256_accelerated(void)
{
	return FALSE;
}
#endif

void
sha256_allow_cpu(gboolean allow)
{
	g_atomic_int_set(&cpu_allowed, allow ? 1 : 0);
}

void
sha256_init(Sha256 *sha)
{
	g_return_if_fail(sha != NULL);

	memset(sha, 0, sizeof(*sha));
	if (!sha256_accelerated())
		sha->portable = g_checksum_new(G_CHECKSUM_SHA256);
	memcpy(sha->h, initial_h, sizeof(sha->h));
}

void
sha256_update(Sha256 *sha, const void *data, gsize len)
{
	const guint8 *p = data;

	g_return_if_fail(sha != NULL);

	if (sha->portable) {
		/* GChecksum takes a gssize. */
		for (gsize done = 0; done < len;) {
			gsize n = MIN(len - done, (gsize)G_MAXSSIZE);

			g_checksum_update(sha->portable, p + done, (gssize)n);
			done += n;
		}
		return;
	}
#ifdef HAVE_SHA_NI
	sha->total += len;
	if (sha->buffered > 0) {
		gsize n = MIN(len, sizeof(sha->block) - sha->buffered);

		memcpy(sha->block + sha->buffered, p, n);
		sha->buffered += n;
		p += n;
		len -= n;
		if (sha->buffered < sizeof(sha->block))
			return;
		blocks_sha_ni(sha->h, sha->block, 1);
		sha->buffered = 0;
	}
	if (len >= 64) {
		blocks_sha_ni(sha->h, p, len / 64);
		p += len / 64 * 64;
		len %= 64;
	}
	memcpy(sha->block, p, len);
	sha->buffered = len;
#endif
}

void
sha256_finish_hex(Sha256 *sha, char hex[SHA256_HEX_SIZE])
{
	g_return_if_fail(sha != NULL);

	if (sha->portable) {
		g_strlcpy(hex, g_checksum_get_string(sha->portable), SHA256_HEX_SIZE);
		sha256_clear(sha);
		return;
	}
#ifdef HAVE_SHA_NI
	{
		/* A 1 bit, zeros, and the length in bits, big-endian, to a whole block. */
		guint8 pad[128] = { 0x80 };
		guint64 bits = sha->total * 8;
		gsize padlen = (sha->buffered < 56 ? 56 : 120) - sha->buffered;

		for (int i = 0; i < 8; i++)
			pad[padlen + (gsize)i] = (guint8)(bits >> (56 - 8 * i));
		sha256_update(sha, pad, padlen + 8);
		for (int i = 0; i < 8; i++)
			g_snprintf(hex + 8 * i, 9, "%08x", sha->h[i]);
	}
#endif
	sha256_clear(sha);
}

void
sha256_clear(Sha256 *sha)
{
	if (!sha)
		return;
	g_clear_pointer(&sha->portable, g_checksum_free);
	memset(sha, 0, sizeof(*sha));
}
