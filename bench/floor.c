/* SPDX-License-Identifier: MIT */
/*
 * floor.c - what a timer operation cannot beat on this machine: the memory
 * floor under start, cancel and re-arm of N timers.
 *
 * N 64-byte records shaped like struct hrt_timer (a list link at offset 0,
 * the state word at offset 56) in one array, as bench/peers lays out its
 * timers (one malloc of N records).  Each operation works on records at
 * random indices drawn before the clock starts, so the generator is not
 * timed, and each result is read back afterwards so nothing is optimised
 * away.  Every operation runs on two layouts, alternating repetitions:
 *   a64  the array 64-byte aligned: a record is one cache line;
 *   a16  the array at 16 bytes past a line, as malloc returns a large
 *        block (glibc's mmapped chunks): a record spans two lines, the
 *        link in the first and the state word in the second.
 * Operations (ns per op, median of REPS after one warm-up):
 *   store   one 8-byte store into the state word of a random record
 *   touch   stores into the link and the state word of a random record
 *   chase   a dependent load through a random cycle over all records: the
 *           latency of one miss, nothing overlapped
 *   move    unlink a random record from its doubly-linked list (random
 *           neighbours: written, and read first for the unlink) and link
 *           it at the tail of another list, then store its state word;
 *           operations are independent, so their misses overlap
 *   hot     link a record at the tail of one of 64 lists and unlink it: a
 *           start+cancel whose lines all stay in cache (no N dependence)
 *   heap4   one level of a 4-ary heap sift (libev's layout: 16-byte
 *           {key, record} slots, four children per line): swap a random
 *           slot with its parent and store both records' heap indices
 *
 * Usage: floor [-c] [N ...]   (default 1000 10000 100000 1000000)
 *   -c  CSV lines  floor,OP-LAYOUT,n,ns_per_op,median,min,max,reps
 *       (bench/peers/rounds.awk merges rounds of them)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define K (1u << 19)            /* ops per timed repetition */
#define REPS 7
#define LISTS 64

struct rec {
	struct rec *next, *prev;        /* offset 0, as hrt's wheel link */
	uint64_t pad[5];
	uint64_t state;                 /* offset 56, as hrt's state word */
};

struct slot {
	int64_t key;
	struct rec *w;
};

_Static_assert(sizeof(struct rec) == 64, "a record is a 64-byte timer");

/* One layout's state; the ops below work on the current one's. */
struct layout {
	char *block;
	struct rec *recs;
	struct rec heads[LISTS];        /* [0]: all records at first; [1]: moved ones */
	struct slot *heap;
};

static size_t n;
static uint32_t *idx;           /* K random indices below n */
static struct rec *recs, *heads;
static struct slot *heap;
static volatile uint64_t sink;

static uint64_t rng = 0x666c6f6f72ULL;  /* "floor" */

static uint64_t rng_next(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static size_t below(size_t m)
{
	return (size_t)(((unsigned __int128)rng_next() * m) >> 64);
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void list_init(struct rec *h)
{
	h->next = h->prev = h;
}

static inline void link_tail(struct rec *h, struct rec *x)
{
	x->prev = h->prev;
	x->next = h;
	h->prev->next = x;
	h->prev = x;
}

static inline void unlink_rec(struct rec *x)
{
	x->prev->next = x->next;
	x->next->prev = x->prev;
}

__attribute__((noinline)) static void op_store(void)
{
	for (uint32_t j = 0; j < K; j++)
		recs[idx[j]].state = j;
}

__attribute__((noinline)) static void op_touch(void)
{
	for (uint32_t j = 0; j < K; j++) {
		struct rec *x = &recs[idx[j]];

		x->pad[0] = j;
		x->state = j;
	}
}

/* The cycle lives in pad[1] as an index, so the list links stay intact. */
__attribute__((noinline)) static void op_chase(void)
{
	uint64_t p = 0;

	for (uint32_t j = 0; j < K; j++)
		p = recs[p].pad[1];
	sink = p;
}

__attribute__((noinline)) static void op_move(void)
{
	for (uint32_t j = 0; j < K; j++) {
		struct rec *x = &recs[idx[j]];

		unlink_rec(x);
		link_tail(&heads[1], x);
		x->state = j;
	}
}

/* The extra record is recs[n]: one timer started and cancelled, as in
 * bench/peers' start_cancel; the list's tail is a random list's. */
__attribute__((noinline)) static void op_hot(void)
{
	struct rec *x = &recs[n];

	for (uint32_t j = 0; j < K; j++) {
		link_tail(&heads[idx[j] % LISTS], x);
		x->state = j;
		unlink_rec(x);
	}
}

/* libev's 4-heap with its three leading unused slots: children of k are
 * 4k - 8 .. 4k - 5, so the parent of k is (k - 4) / 4 + 3. */
__attribute__((noinline)) static void op_heap4(void)
{
	for (uint32_t j = 0; j < K; j++) {
		size_t k = idx[j] + 4, p = (k - 4) / 4 + 3;
		struct slot t = heap[k];

		heap[k] = heap[p];
		heap[p] = t;
		heap[k].w->state = k;
		heap[p].w->state = p;
	}
}

static const struct {
	const char *name;
	void (*run)(void);
} ops[] = {
	{ "store", op_store }, { "touch", op_touch }, { "chase", op_chase },
	{ "move", op_move }, { "hot", op_hot }, { "heap4", op_heap4 },
};
#define N_OPS (sizeof(ops) / sizeof(ops[0]))
#define N_LAYOUTS 2
static const char *const layout_name[N_LAYOUTS] = { "a64", "a16" };

static void *xmalloc(size_t sz)
{
	void *p = malloc(sz);

	if (!p) {
		fprintf(stderr, "floor: out of memory at N=%zu\n", n);
		exit(1);
	}
	return p;
}

static void use(struct layout *y)
{
	recs = y->recs;
	heads = y->heads;
	heap = y->heap;
}

/*
 * Records n + 1 (the extra one last), all in list 0 in a random order, a
 * random cycle (Sattolo) through pad[1], a heap of n + 4 slots.  Every op
 * leaves these valid for every other, so this runs once per layout.
 */
static void layout_init(struct layout *y, int l)
{
	size_t i, *perm = xmalloc(n * sizeof(*perm));

	y->block = aligned_alloc(64, (n + 2) * sizeof(struct rec));
	y->heap = xmalloc((n + 4) * sizeof(*y->heap));
	if (!y->block) {
		fprintf(stderr, "floor: out of memory at N=%zu\n", n);
		exit(1);
	}
	y->recs = (struct rec *)(y->block + (l ? 16 : 0));
	use(y);
	memset(recs, 0, (n + 1) * sizeof(*recs));
	for (i = 0; i < n; i++)
		perm[i] = i;
	for (i = n - 1; i > 0; i--) {
		size_t k = below(i), t = perm[i];

		perm[i] = perm[k];
		perm[k] = t;
	}
	for (i = 0; i < n; i++)
		recs[perm[i]].pad[1] = perm[(i + 1) % n];
	for (i = 0; i < LISTS; i++)
		list_init(&heads[i]);
	for (i = 0; i < n; i++)
		link_tail(&heads[0], &recs[perm[i]]);
	for (i = 0; i < n + 4; i++)
		heap[i] = (struct slot){ (int64_t)rng_next(), &recs[i < n ? perm[i] : 0] };
	free(perm);
}

/* Untimed: a checksum over everything the ops wrote. */
static void consume(void)
{
	uint64_t s = 0;
	size_t i;

	for (i = 0; i <= n; i++)
		s += recs[i].state + recs[i].pad[0] + (uintptr_t)recs[i].next;
	sink = s;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void run_n(size_t nn, int csv)
{
	static double v[N_OPS][N_LAYOUTS][REPS];
	static struct layout lay[N_LAYOUTS];
	size_t i, o;
	int l, r;

	n = nn;
	idx = xmalloc(K * sizeof(*idx));
	for (i = 0; i < K; i++)
		idx[i] = (uint32_t)below(n);
	for (l = 0; l < N_LAYOUTS; l++)
		layout_init(&lay[l], l);
	/* The layouts alternate within each op's repetitions, so a noisy
	 * moment on a shared machine hits both. */
	for (o = 0; o < N_OPS; o++) {
		for (r = -1; r < REPS; r++) {
			for (l = 0; l < N_LAYOUTS; l++) {
				int64_t t0;

				use(&lay[l]);
				t0 = now_ns();
				ops[o].run();
				if (r >= 0)
					v[o][l][r] = (double)(now_ns() - t0) / K;
				consume();
			}
		}
	}
	for (o = 0; o < N_OPS; o++) {
		for (l = 0; l < N_LAYOUTS; l++) {
			double *x = v[o][l];

			qsort(x, REPS, sizeof(*x), cmp_double);
			if (csv)
				printf("floor,%s-%s,%zu,ns_per_op,%.2f,%.2f,%.2f,%d\n", ops[o].name,
				       layout_name[l], n, x[REPS / 2], x[0], x[REPS - 1], REPS);
			else
				printf("%-6s %-6s %8zu %8.1f [%.1f-%.1f]\n", ops[o].name,
				       layout_name[l], n, x[REPS / 2], x[0], x[REPS - 1]);
		}
	}
	fflush(stdout);
	for (l = 0; l < N_LAYOUTS; l++) {
		free(lay[l].block);
		free(lay[l].heap);
	}
	free(idx);
}

int main(int argc, char **argv)
{
	static const size_t def[] = { 1000, 10000, 100000, 1000000 };
	int csv = argc > 1 && !strcmp(argv[1], "-c"), a = 1 + csv;
	void *probe = malloc(1000001 * sizeof(struct rec));

	/* Where bench/peers' timers start: its array is one malloc. */
	if (!csv)
		printf("# ns per op, median [min-max] of %d repetitions of %u ops; "
		       "a malloc of 10^6 timers starts %u bytes past a cache line\n"
		       "%-6s %-6s %8s %8s\n", REPS, K,
		       (unsigned)((uintptr_t)probe % 64), "op", "layout", "N", "ns/op");
	free(probe);
	if (a == argc) {
		for (size_t i = 0; i < sizeof(def) / sizeof(def[0]); i++)
			run_n(def[i], csv);
		return 0;
	}
	for (; a < argc; a++) {
		char *end;
		unsigned long long v = strtoull(argv[a], &end, 10);

		if (*end || v < 4 || v > 100000000) {
			fprintf(stderr, "usage: floor [-c] [N ...]   (4 <= N <= 10^8)\n");
			return 2;
		}
		run_n((size_t)v, csv);
	}
	return 0;
}
