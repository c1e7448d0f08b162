/*
 * tile_embed.h: the one type shared by tilec's `--emit=embed` output and libtilert.
 *
 * `tilec FILE.tile --emit=embed -o FILE.c` writes a C file that includes this header and defines
 * `const tile_embedded_module tile_module_<stem>` (stem: the file name without .tile). The
 * runtime loads it with tile_module_create() (tile.h). Format of `meta`: dsl/metadata.md.
 *
 * Invariants: every pointer refers to static storage; `ptx` and `meta` are NUL-terminated;
 * `cubin` is NULL (and cubin_size 0) when tilec ran without ptxas.
 */
#ifndef TILE_EMBED_H
#define TILE_EMBED_H

#include <stddef.h>

typedef struct tile_embedded_module {
	const char *name;            /* module name (the stem) */
	const unsigned char *cubin;  /* sm_90a cubin, or NULL when tilec had no ptxas */
	size_t cubin_size;
	const char *ptx;             /* NUL-terminated PTX text */
	const char *meta;            /* NUL-terminated metadata text, format above */
} tile_embedded_module;

#endif /* TILE_EMBED_H */
