/*
 * support.h: helpers shared by the runtime's CPU tests: the fake driver's control block, a
 * runtime opened on it, a counting allocator that can fail its Nth allocation, and embedded
 * modules whose "binaries" the fake driver understands (see fake_cuda.h).
 *
 * FAKE_CUDA_PATH and FAKE_CUDA_OLD_PATH come from tests/runtime/CMakeLists.txt.
 */
#ifndef TILE_TEST_SUPPORT_H
#define TILE_TEST_SUPPORT_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "fake_cuda.h"
#include "internal.h"
#include "tile.h"

/* The fake driver's state, reset to its defaults. */
fake_cuda *fake_reset(void);
/* The fake driver's state as it is. */
fake_cuda *fake_state(void);

typedef struct counting_alloc {
	long allocs, frees, live;
	long fail_at; /* fail the allocation with this 1-based number; 0: never */
	bool failed;  /* fail_at was reached */
} counting_alloc;

tile_allocator counting_allocator(counting_alloc *c);

/* A runtime on the fake driver, with the given allocator (NULL: malloc). Asserts success. */
tile_rt *fake_rt(const tile_allocator *a);
tile_status fake_rt_try(const tile_allocator *a, tile_rt **out);

/* An embedded module around a metadata text and a fake image (kernel:sizes list). */
tile_embedded_module fake_module(const char *name, const char *meta, const char *cubin,
	const char *ptx);

/* The metadata of dsl/metadata.md's example, and the matching fake binaries. */
extern const char vector_add_meta[];
extern const char vector_add_cubin[];
extern const char vector_add_ptx[];

/* Asserts that the error detail of rt contains `part`. */
#define assert_error_has(rt, part) assert_error_text(tile_rt_error(rt), (part))
void assert_error_text(const char *msg, const char *part);

#endif /* TILE_TEST_SUPPORT_H */
