/*
 * pass_desugar_pipeline.h: the desugar-pipeline pass, an AST pass that runs
 * between import and sema (the pass table in pipeline.c places it).
 */
#ifndef PASS_DESUGAR_PIPELINE_H
#define PASS_DESUGAR_PIPELINE_H

#include "tilec.h"

/* Rewrites every kernel's 'for ... pipeline(S)' loop into explicit roles,
 * rings and mbarriers, and marks the kernel (N_KERNEL.op) with the outcome.
 * Errors in a pipelined loop are reported and leave the kernel refused, not
 * a failed pass: sema still checks the rest. False only on an internal error. */
bool pass_desugar_pipeline(Ctx *cx);

#endif
