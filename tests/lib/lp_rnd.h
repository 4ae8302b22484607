/* SPDX-License-Identifier: MIT */
/*
 * The C unit tests' random numbers: xorshift64 (Marsaglia, "Xorshift
 * RNGs", 2003; shifts 13, 7, 17), seeded by each test so that a failure
 * repeats. Not for anything but test data.
 */
#ifndef LP_RND_H
#define LP_RND_H

static unsigned long long lp_rnd_state = 88172645463325252ull;

static inline unsigned rnd(void)
{
	lp_rnd_state ^= lp_rnd_state << 13;
	lp_rnd_state ^= lp_rnd_state >> 7;
	lp_rnd_state ^= lp_rnd_state << 17;
	return (unsigned)lp_rnd_state;
}

#endif
