/*
 * ref_util.c - problem validation and the plumbing every other file uses:
 * status strings, shape and cu_seqlens checks (spec §5, §6 "validation
 * performed"), element counts, sequence and chunk ranges (fixed length:
 * sequence b covers [bT, bT + T); varlen: [cu[n], cu[n+1])), state layout
 * conversion for state_v_first (spec §1), and a parallel-for on pthreads.
 *
 * Determinism: parallel tasks write disjoint outputs and every reduction
 * across tasks runs serially afterwards, so results do not depend on the
 * thread count.
 */
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ref_internal.h"

const char *ref_status_str(ref_status s)
{
	switch (s) {
	case REF_OK: return "ok";
	case REF_ERR_ARG: return "bad argument";
	case REF_ERR_SHAPE: return "bad shape";
	case REF_ERR_NOMEM: return "out of memory";
	}
	return "unknown status";
}

void *ref_alloc(size_t n, size_t elem)
{
	if (elem != 0 && n > SIZE_MAX / elem)
		return NULL;
	return calloc(n ? n : 1, elem);
}

static bool chunk_size_ok(const ref_problem *p)
{
	int c = p->opts.chunk_size;
	if (c == 0 || c == 32 || c == 64)
		return true;
	return c == 16 && p->op == REF_GDN; /* spec §0, pitfall 15 */
}

static ref_status check_cu(const ref_problem *p)
{
	const int64_t *cu = p->cu_seqlens;
	if (p->B != 1 || p->n_seqs < 1)
		return REF_ERR_SHAPE; /* spec §5: varlen needs B = 1 */
	if (cu[0] != 0 || cu[p->n_seqs] != p->T)
		return REF_ERR_SHAPE;
	for (int n = 0; n < p->n_seqs; n++)
		if (cu[n + 1] < cu[n])
			return REF_ERR_SHAPE;
	return REF_OK;
}

static ref_status check_opts(const ref_problem *p)
{
	const ref_opts *o = &p->opts;
	if (!chunk_size_ok(p) || o->dtype < REF_F32 || o->dtype > REF_F16)
		return REF_ERR_ARG;
	if (o->allow_neg_eigval && !o->use_beta_sigmoid_in_kernel)
		return REF_ERR_ARG; /* spec §2.2: FLA raises ValueError */
	if (o->has_lower_bound && p->op == REF_GDN)
		return REF_ERR_ARG; /* spec §2.3: GDN has no lower bound */
	if (o->has_lower_bound && !isfinite(o->lower_bound))
		return REF_ERR_ARG;
	if (o->safe_gate && o->use_gate_in_kernel && p->op == REF_KDA &&
	    (!o->has_lower_bound || o->lower_bound < -5 ||
	     o->lower_bound >= 0))
		return REF_ERR_ARG; /* spec §2.4 */
	if (!isfinite(o->scale))
		return REF_ERR_ARG;
	return REF_OK;
}

ref_status ref_problem_check(const ref_problem *p)
{
	if (!p || (p->op != REF_GDN && p->op != REF_KDA))
		return REF_ERR_ARG;
	if (p->B < 1 || p->T < 0 || p->H < 1 || p->HV < 1 || p->K < 1 ||
	    p->V < 1 || p->HV % p->H != 0 || p->K > 256)
		return REF_ERR_SHAPE; /* spec §6: K <= 256, HV % H == 0 */
	double big = (double)p->B * p->T * p->HV * (p->K + 64.0) * p->V;
	if ((double)p->B * p->T > INT_MAX / 2 || big > 1e15)
		return REF_ERR_SHAPE;
	if (p->cu_seqlens) {
		ref_status s = check_cu(p);
		if (s != REF_OK)
			return s;
	}
	return check_opts(p);
}

int ref_n_seqs(const ref_problem *p)
{
	return p->cu_seqlens ? p->n_seqs : p->B;
}

int ref_chunk_len(const ref_problem *p)
{
	return p->opts.chunk_size ? p->opts.chunk_size : 64;
}

double ref_scale(const ref_problem *p)
{
	return p->opts.scale != 0 ? p->opts.scale : 1.0 / sqrt((double)p->K);
}

void ref_seq_range(const ref_problem *p, int n, int *bos, int *eos)
{
	if (p->cu_seqlens) {
		*bos = (int)p->cu_seqlens[n];
		*eos = (int)p->cu_seqlens[n + 1];
	} else {
		*bos = n * p->T;
		*eos = *bos + p->T;
	}
}

int ref_chunk_offset(const ref_problem *p, int n)
{
	int C = ref_chunk_len(p), off = 0;
	for (int m = 0; m < n; m++) {
		int bos, eos;
		ref_seq_range(p, m, &bos, &eos);
		off += (eos - bos + C - 1) / C;
	}
	return off;
}

ref_status ref_problem_sizes(const ref_problem *p, ref_sizes *s)
{
	ref_status st = ref_problem_check(p);
	if (st != REF_OK || !s)
		return st != REF_OK ? st : REF_ERR_ARG;
	size_t bt = (size_t)p->B * p->T, K = p->K, V = p->V, HV = p->HV;
	s->n_seqs = ref_n_seqs(p);
	s->n_chunks = ref_chunk_offset(p, s->n_seqs);
	s->chunk_size = ref_chunk_len(p);
	s->qk = bt * p->H * K;
	s->v = bt * HV * V;
	s->beta = bt * HV;
	s->g = bt * HV * (size_t)ref_gate_width(p);
	s->state = (size_t)s->n_seqs * HV * K * V;
	s->A_log = HV;
	s->dt_bias = HV * (size_t)ref_gate_width(p);
	s->h = (size_t)s->n_chunks * HV * K * V;
	s->mat = bt * HV * (size_t)s->chunk_size;
	return REF_OK;
}

ref_status ref_check_in(const ref_problem *p, const void *q, const void *k,
			const void *v, const void *g, const void *beta,
			const void *A_log)
{
	ref_status s = ref_problem_check(p);
	if (s != REF_OK)
		return s;
	if (!q || !k || !v || !g || !beta)
		return REF_ERR_ARG;
	bool lb_form = p->op == REF_KDA && p->opts.has_lower_bound;
	if (p->opts.use_gate_in_kernel && !A_log && !lb_form)
		return REF_ERR_ARG; /* §2.4: A_log is optional only with lb */
	return REF_OK;
}

void ref_state_load(const ref_problem *p, const double *src, double *S)
{
	int K = p->K, V = p->V;
	if (!src) {
		memset(S, 0, sizeof(double) * K * V);
		return;
	}
	for (int a = 0; a < K; a++)
		for (int b = 0; b < V; b++)
			S[a * V + b] = p->opts.state_v_first ? src[b * K + a]
							     : src[a * V + b];
}

void ref_state_store(const ref_problem *p, const double *S, double *dst)
{
	int K = p->K, V = p->V;
	for (int a = 0; a < K; a++)
		for (int b = 0; b < V; b++) {
			if (p->opts.state_v_first)
				dst[b * K + a] = S[a * V + b];
			else
				dst[a * V + b] = S[a * V + b];
		}
}

typedef struct worker {
	pthread_t th;
	int first, stride, n;
	ref_task_fn fn;
	void *ctx;
	ref_status st;
} worker;

static void *worker_main(void *arg)
{
	worker *w = arg;
	for (int i = w->first; i < w->n && w->st == REF_OK; i += w->stride)
		w->st = w->fn(w->ctx, i);
	return NULL;
}

ref_status ref_parallel_for(int n, int threads, ref_task_fn fn, void *ctx)
{
	enum { MAX_THREADS = 64 };
	worker ws[MAX_THREADS];
	int nt = threads < 1 ? 1 : threads;
	if (nt > MAX_THREADS)
		nt = MAX_THREADS;
	if (nt > n)
		nt = n < 1 ? 1 : n;
	bool started[MAX_THREADS] = {false};
	for (int i = 0; i < nt; i++) {
		ws[i] = (worker){.first = i, .stride = nt, .n = n, .fn = fn,
				 .ctx = ctx, .st = REF_OK};
		if (i > 0)
			started[i] = pthread_create(&ws[i].th, NULL,
						    worker_main, &ws[i]) == 0;
	}
	worker_main(&ws[0]);
	for (int i = 1; i < nt; i++) {
		if (started[i])
			pthread_join(ws[i].th, NULL);
		else
			worker_main(&ws[i]); /* no thread: run its share here */
	}
	for (int i = 0; i < nt; i++)
		if (ws[i].st != REF_OK)
			return ws[i].st;
	return REF_OK;
}
