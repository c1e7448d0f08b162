/*
 * ref_rng.c - the reference's pseudo-random numbers: xoshiro256**
 * (Blackman and Vigna, 2018) seeded through splitmix64, uniform doubles
 * from the top 53 bits, and normals by the Box-Muller transform (both
 * values of each pair are used, the second is cached in the struct).
 *
 * The integer stream is bit-identical on every machine. Normals go
 * through log, sqrt and cos/sin, so they can differ in the last ulp
 * between C libraries; the case generators round every value to float or
 * narrower, which hides such differences in all but astronomically rare
 * cases. Streams: (seed, stream) pairs are mixed through splitmix64, so
 * each tensor of a case can draw from its own independent stream.
 */
#include <math.h>

#include "ref.h"

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

void ref_rng_seed(ref_rng *r, uint64_t seed, uint64_t stream)
{
	uint64_t x = seed;
	uint64_t mix = splitmix64(&x) ^ (stream * 0xd1342543de82ef95ull);
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&mix);
	r->has_spare = false;
	r->spare = 0;
}

uint64_t ref_rng_next(ref_rng *r)
{
	uint64_t *s = r->s;
	uint64_t out = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return out;
}

double ref_rng_uniform(ref_rng *r)
{
	return (double)(ref_rng_next(r) >> 11) * 0x1.0p-53;
}

double ref_rng_normal(ref_rng *r)
{
	if (r->has_spare) {
		r->has_spare = false;
		return r->spare;
	}
	double u1 = 1.0 - ref_rng_uniform(r); /* (0, 1]: log is finite */
	double u2 = ref_rng_uniform(r);
	double rad = sqrt(-2.0 * log(u1));
	double th = 6.283185307179586 * u2;
	r->spare = rad * sin(th);
	r->has_spare = true;
	return rad * cos(th);
}
