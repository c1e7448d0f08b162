/*
 * fuzz_frontend.c: libFuzzer target for the front end and the IR pipeline.
 * Each input is a .tile source held in memory; it goes through the lexer,
 * parser, imports (only the prelude resolves: the file lives in a directory
 * that does not exist), sema, lowering, every pass and the verifier. Any
 * crash, leak, hang or internal error is a bug: the last is turned into a
 * crash so the fuzzer keeps the input.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "tilec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	Ctx *cx = ctx_create();
	int fid = ctx_add_source(cx, "/nonexistent-fuzz-dir/fuzz.tile",
				 (const char *)data, size);
	Output out;
	Options opt = {.verify_each = true};
	compile_file(cx, fid, EMIT_TIR, &opt, &out);
	FILE *null = fopen("/dev/null", "w");
	if (null) {
		diag_print_all(cx, null);
		fclose(null);
	}
	if (cx->internal_error) {
		fprintf(stderr, "%s\n", cx->internal_msg);
		abort();
	}
	ctx_destroy(cx);
	return 0;
}
