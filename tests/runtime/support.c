/*
 * support.c: see support.h. The fake driver is reached with dlopen on the same path the
 * runtime opens, so both see one instance of the library and its control block.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"

const char vector_add_meta[] =
	"tilec-meta 1\n"
	"module vector_add\n"
	"kernel vector_add\n"
	"  threads 256 1 1\n"
	"  grid (cdiv n 256) 1 1\n"
	"  smem 0\n"
	"  cluster 1 1 1\n"
	"  param 0 a ptr f32 1 n\n"
	"  param 1 b ptr f32 1 n\n"
	"  param 2 c ptr f32 1 n\n"
	"  param 3 n scalar i32\n"
	"end\n";
const char vector_add_cubin[] = "FAKE-CUBIN vector_add:8,8,8,4";
const char vector_add_ptx[] = "// FAKE-PTX vector_add:8,8,8,4";

static void *fake_lib(void)
{
	static void *lib;

	if (!lib)
		lib = dlopen(FAKE_CUDA_PATH, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
	if (!lib)
		fail_msg("cannot open the fake driver %s: %s", FAKE_CUDA_PATH, dlerror());
	return lib;
}

fake_cuda *fake_state(void)
{
	fake_cuda_state_fn fn;
	void *sym = dlsym(fake_lib(), "fake_cuda_state");

	memcpy(&fn, &sym, sizeof fn);
	return fn();
}

fake_cuda *fake_reset(void)
{
	fake_cuda_reset_fn fn;
	void *sym = dlsym(fake_lib(), "fake_cuda_reset");

	memcpy(&fn, &sym, sizeof fn);
	fn();
	return fake_state();
}

static void *counting_alloc_fn(void *user, size_t size)
{
	counting_alloc *c = user;

	if (++c->allocs == c->fail_at) {
		c->failed = true;
		return NULL;
	}
	c->live++;
	return malloc(size);
}

static void counting_free_fn(void *user, void *p)
{
	counting_alloc *c = user;

	c->frees++;
	c->live--;
	free(p);
}

tile_allocator counting_allocator(counting_alloc *c)
{
	tile_allocator a = {counting_alloc_fn, counting_free_fn, c};
	return a;
}

tile_status fake_rt_try(const tile_allocator *a, tile_rt **out)
{
	tile_rt_options opt;

	memset(&opt, 0, sizeof opt);
	opt.driver_path = FAKE_CUDA_PATH;
	opt.allocator = a;
	return tile_rt_create_ex(&opt, out);
}

tile_rt *fake_rt(const tile_allocator *a)
{
	tile_rt *rt = NULL;
	tile_status st = fake_rt_try(a, &rt);

	assert_int_equal(st, TILE_OK);
	assert_non_null(rt);
	return rt;
}

tile_embedded_module fake_module(const char *name, const char *meta, const char *cubin,
	const char *ptx)
{
	tile_embedded_module m = {name, (const unsigned char *)cubin, cubin ? strlen(cubin) + 1 : 0,
		ptx, meta};
	return m;
}

void assert_error_text(const char *msg, const char *part)
{
	if (!msg || !strstr(msg, part))
		fail_msg("error detail \"%s\" lacks \"%s\"", msg ? msg : "(null)", part);
}
