/*
 * target.c: the facts of the one target, sm_90a (Hopper), in one place.
 * Sources: CUDA programming guide (compute capability 9.0 limits), PTX ISA
 * (mbarrier, setmaxnreg), ptxas behaviour (registers allocated in units of
 * 8; .maxntid with .minnctapersm 1 fixes the per-thread count at entry).
 */
#include "tilec.h"

const TargetFacts target_sm90a = {
	.regs_per_sm = 65536,
	.smem_per_cta = 232448,        /* 227 KiB, with the opt-in attribute */
	.smem_per_sm = 233472,         /* 228 KiB: the CTAs' shared memory plus 1 KiB each */
	.max_threads = 1024,
	.max_mbar_count = (1 << 20) - 1,
};

int target_entry_regs(int threads)
{
	int r = (target_sm90a.regs_per_sm / threads) & ~7;
	return r > 255 ? 248 : r;
}
