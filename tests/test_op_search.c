/* SPDX-License-Identifier: MIT */
/*
 * test_op_search.c - no program of operations makes an op, a next-event
 * query or a pass scan more than a bounded number of far timers (issue
 * 47): a search for bad sequences, scored by counts (stats.wheel_scanned,
 * stats.tree_ops, stats.nodes_visited), never by time.
 *
 * A program is a shape (delay D, jitter J, window as a share of the
 * delay, periodic timers or not, callbacks that meddle or not) and a list
 * of ops: start a random timer, push on the timer due first (a keep-alive
 * renewed just before its deadline) or the one due last, re-arm one inside
 * its slot, cancel the first (FIFO) or a random one, a query, a pass a
 * little later or at the first soft expiry.  n timers are started first;
 * after every op the next event is asked, as a loop does before it sleeps.
 * The bounds (W5, wheel.h):
 *   - far timers scanned: at most HRT_WHEEL_SCAN_MAX per search of the
 *     set - 2 searches an op (its own and the query), 2 per callback of a
 *     pass (its step of the leftmost run, a meddling callback's query) and
 *     3 more a pass - whatever the program;
 *   - tree inserts and erases: at most 4 per op, fill and callback
 *     (amortised: a start or cancel erases and inserts once; a far timer
 *     goes into the tree at most once per start and leaves it once);
 *   - greedy nodes visited: at most 4 (log2 n + 2) per callback and pass.
 * Programs: the seeds - issue 47's pattern (30 s timeouts + 0-4 s jitter
 * in one slot, the first pushed on), FIFO cancel, LRU, periodic restart
 * into a big slot, random - on a virtual base and a real one (its fd:
 * starts then also move the wake-up); random programs; then a hill-climb
 * that mutates the worst program found so far (most scanned in one op,
 * then most tree work an op) and keeps what scores no lower.
 *     build/tests/test_op_search [SEED]
 * replays a run; a failure names the program and the op.
 * After every op but a pass: no far timer moved into the tree, at most 2
 * tree ops (the op's own).
 * A second test: a big slot in no order whose earliest left answers the
 * next event with its bound, early, never late, and is exact after one
 * wake-up there (W5), in a pass with a tied timer in the park (S1) and
 * outside one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"

#include "hrt.h"
#include "hrt_values.h"
#include "wheel.h"

#define N 1024                  /* timers */
#define OPS 1500                /* ops a program, after the n starts */
#define MS 1000000LL
#define SEC 1000000000LL

enum op { O_START, O_PUSH_FIRST, O_PUSH_LAST, O_STAY, O_CANCEL_FIRST, O_CANCEL_ANY, O_QUERY,
	  O_PASS, O_JUMP, O_NOPS };
static const char *const op_name[O_NOPS] = { "start", "push-first", "push-last", "stay",
	"cancel-first", "cancel-any", "query", "pass", "jump" };

struct step {
	unsigned char op;
	uint32_t arg;
};

struct program {
	const char *name;
	hrt_time_t delay, jitter;       /* a start: now + delay + [0, jitter) */
	unsigned window_pct;            /* slack: this % of the delay */
	int periodic;                   /* every 8th timer restarts, a delay on */
	int meddle;                     /* callbacks push the first on and ask */
	struct step step[OPS];
};

/* What a run scored: the worst op and the totals. */
struct score {
	uint64_t max_scanned;           /* in one op */
	int worst_op;
	uint64_t tree_ops, nodes, ops, runs, passes;
};

static struct hrt_timer tms[N];
static int queued[N];
static hrt_time_t hard_of[N];
static struct hrt_base *base;
static const struct program *cur;
static hrt_time_t vnow;
static uint64_t runs;

static uint64_t rnd(uint64_t *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return *s >> 22;
}

static struct hrt_stats stats(void)
{
	struct hrt_stats s;

	assert_int_equal(hrt_base_get_stats(base, &s, sizeof(s)), 0);
	return s;
}

static hrt_time_t now_of(int real)
{
	return real ? tv_now(base) : vnow;
}

/* Timer i started at now + delay + a share of the jitter that arg picks. */
static void start_at(int i, hrt_time_t now, uint32_t arg)
{
	hrt_time_t d = cur->delay + (cur->jitter ? (hrt_time_t)(arg % (uint64_t)cur->jitter) : 0);
	hrt_time_t slack = d / 100 * cur->window_pct;

	assert_int_equal(hrt_timer_start_range(&tms[i], base, now + d, slack, HRT_MODE_ABS), 0);
	queued[i] = 1;
	hard_of[i] = now + d + slack;
}

/* The queued timer due first (dir < 0) or last; -1 if none. */
static int pick(int dir)
{
	int best = -1;

	for (int i = 0; i < N; i++)
		if (queued[i] && (best < 0 || (dir < 0 ? hard_of[i] < hard_of[best]
						       : hard_of[i] > hard_of[best])))
			best = i;
	return best;
}

static enum hrt_restart cb(struct hrt_timer *t, hrt_time_t now)
{
	int i = (int)(t - tms), f;

	runs++;
	queued[i] = 0;
	if (cur->meddle && (f = pick(-1)) >= 0) {       /* a client pushes on meanwhile */
		start_at(f, now, (uint32_t)(runs * 2654435761u));
		(void)tv_next(base);
	}
	if (cur->periodic && i % 8 == 0) {
		hrt_timer_forward(t, now, cur->delay);
		return HRT_RESTART;
	}
	return HRT_NORESTART;
}

/* After a pass: which timers ran, and where the periodic ones went. */
static void sync_model(void)
{
	for (int i = 0; i < N; i++) {
		queued[i] = hrt_timer_is_queued(&tms[i]) == 1;
		hard_of[i] = tv_hard(&tms[i]);
	}
}

/* One op of the program; returns the searches it may make (the bound's
 * unit) besides the query after it. */
static uint64_t do_step(const struct step *s, int real)
{
	hrt_time_t now = now_of(real);
	uint64_t r0 = runs;
	int i;

	switch (s->op) {
	case O_START:
		start_at((int)(s->arg % N), now, s->arg / N);
		return 1;
	case O_PUSH_FIRST:
	case O_PUSH_LAST:
		if ((i = pick(s->op == O_PUSH_FIRST ? -1 : 1)) >= 0)
			start_at(i, now, s->arg);
		return 1;
	case O_STAY:
		i = (int)(s->arg % N);
		if (queued[i]) {
			hrt_time_t soft = tv_soft(&tms[i]) + (hrt_time_t)(s->arg % 1000);
			hrt_time_t hard = (soft > hard_of[i] ? soft : hard_of[i]) + 1;

			assert_int_equal(hrt_timer_start_range(&tms[i], base, soft, hard - soft,
							       HRT_MODE_ABS), 0);
			hard_of[i] = hard;
		}
		return 1;
	case O_CANCEL_FIRST:
	case O_CANCEL_ANY:
		i = s->op == O_CANCEL_FIRST ? pick(-1) : (int)(s->arg % N);
		if (i >= 0) {
			hrt_timer_cancel(&tms[i]);
			queued[i] = 0;
		}
		return 1;
	case O_QUERY:
		(void)tv_next(base);
		return 1;
	case O_PASS:
	case O_JUMP:
		if (!real) {
			if (s->op == O_JUMP && (i = pick(-1)) >= 0 && tv_soft(&tms[i]) > vnow)
				vnow = tv_soft(&tms[i]);
			vnow += (hrt_time_t)(s->arg % (5 * MS));
		}
		assert_true(hrt_base_run(base, now_of(real), (int)(s->arg & 1)) >= 0);
		sync_model();
		return 2 * (runs - r0) + 3;
	}
	return 0;
}

/* Runs p on a new base (virtual, or real with its fd) and checks every
 * bound; fills *sc.  `label` names the program in a failure. */
static void run_program(const struct program *p, int real, struct score *sc, const char *label)
{
	struct hrt_stats s0, s1, a, z;
	uint64_t searches;

	cur = p;
	base = real ? tv_new(CLOCK_MONOTONIC, 0) : tv_virtual(0);
	assert_non_null(base);
	if (real)
		assert_true(hrt_base_fd(base) >= 0);
	vnow = 0;
	runs = 0;
	memset(sc, 0, sizeof(*sc));
	for (int i = 0; i < N; i++) {
		assert_int_equal(hrt_timer_init(&tms[i], cb), 0);
		queued[i] = 0;
	}
	a = stats();
	for (int i = 0; i < N; i++)
		start_at(i, now_of(real), (uint32_t)(i * 2654435761u));
	for (int k = 0; k < OPS; k++) {
		const struct step *s = &p->step[k];
		uint64_t scanned;

		s0 = stats();
		searches = do_step(s, real) + 1;
		(void)tv_next(base);
		s1 = stats();
		scanned = s1.wheel_scanned - s0.wheel_scanned;
		if (scanned > sc->max_scanned) {
			sc->max_scanned = scanned;
			sc->worst_op = k;
		}
		if (scanned > searches * HRT_WHEEL_SCAN_MAX)
			fail_msg("%s (%s base), op %d (%s, arg %u): %llu far timers scanned, bound %llu "
				 "(%llu searches of at most %d)", label, real ? "fd" : "virtual", k,
				 op_name[s->op], s->arg, (unsigned long long)scanned,
				 (unsigned long long)(searches * HRT_WHEEL_SCAN_MAX),
				 (unsigned long long)searches, HRT_WHEEL_SCAN_MAX);
		/* W5: no op but a pass moves far timers into the tree (the
		 * flush of 1.3's first cut moved a whole slot in one query);
		 * the op's own start, re-arm or cancel is at most 2 tree ops,
		 * and a callback's meddling is in a pass. */
		if (s->op != O_PASS && s->op != O_JUMP &&
		    (s1.wheel_moves != s0.wheel_moves || s1.tree_ops - s0.tree_ops > 2))
			fail_msg("%s (%s base), op %d (%s, arg %u): %llu far timers moved into the "
				 "tree, %llu tree ops (bound 0 and 2 outside a pass)", label,
				 real ? "fd" : "virtual", k, op_name[s->op], s->arg,
				 (unsigned long long)(s1.wheel_moves - s0.wheel_moves),
				 (unsigned long long)(s1.tree_ops - s0.tree_ops));
		sc->passes += s->op == O_PASS || s->op == O_JUMP;
	}
	z = stats();
	sc->ops = N + OPS;
	sc->runs = runs;
	sc->tree_ops = z.tree_ops - a.tree_ops;
	sc->nodes = z.nodes_visited - a.nodes_visited;
	assert_int_equal(hrt_base_check(base, NULL, 0), 0);
	for (int i = 0; i < N; i++)
		hrt_timer_cancel(&tms[i]);
	assert_int_equal(hrt_base_free(base), 0);
	if (sc->tree_ops > 4 * (sc->ops + sc->runs))
		fail_msg("%s (%s base): %llu tree inserts and erases for %llu ops and %llu callbacks "
			 "(bound 4 each)", label, real ? "fd" : "virtual",
			 (unsigned long long)sc->tree_ops, (unsigned long long)sc->ops,
			 (unsigned long long)sc->runs);
	{
		uint64_t lg = 0;

		while ((1u << lg) < N)
			lg++;
		if (sc->nodes > 4 * (lg + 2) * (sc->runs + sc->passes))
			fail_msg("%s (%s base): %llu greedy nodes visited for %llu callbacks in %llu "
				 "passes", label, real ? "fd" : "virtual",
				 (unsigned long long)sc->nodes, (unsigned long long)sc->runs,
				 (unsigned long long)sc->passes);
	}
}

/* The seeds ------------------------------------------------------------- */

static void fill(struct program *p, uint64_t *seed, const unsigned char *ops, int nops)
{
	for (int k = 0; k < OPS; k++) {
		p->step[k].op = ops[(unsigned)rnd(seed) % (unsigned)nops];
		p->step[k].arg = (uint32_t)rnd(seed);
	}
}

static void seed_program(struct program *p, int which, uint64_t *seed)
{
	static const unsigned char push[] = { O_PUSH_FIRST };
	static const unsigned char fifo[] = { O_CANCEL_FIRST, O_START };
	static const unsigned char periodic[] = { O_JUMP, O_PUSH_FIRST, O_START };
	static const unsigned char any[] = { O_START, O_PUSH_FIRST, O_PUSH_LAST, O_STAY,
		O_CANCEL_FIRST, O_CANCEL_ANY, O_QUERY, O_PASS, O_JUMP };

	memset(p, 0, sizeof(*p));
	p->delay = 30 * SEC;
	switch (which) {
	case 0:         /* issue 47, part 3 */
		p->name = "seed: 30 s + 0-4 s jitter, the first pushed on";
		p->jitter = 4 * SEC;
		fill(p, seed, push, 1);
		break;
	case 1:
		p->name = "seed: FIFO cancel of one length, 10 % windows";
		p->window_pct = 10;
		fill(p, seed, fifo, 2);
		break;
	case 2:         /* the earliest re-armed, one length */
		p->name = "seed: LRU of one length, 10 % windows";
		p->window_pct = 10;
		fill(p, seed, push, 1);
		break;
	case 3:
		p->name = "seed: periodic restarts into a big slot, meddling callbacks";
		p->jitter = 4 * SEC;
		p->window_pct = 10;
		p->periodic = 1;
		p->meddle = 1;
		fill(p, seed, periodic, 3);
		break;
	default:
		p->name = "random";
		p->delay = (hrt_time_t)(rnd(seed) % 60) * SEC + 10 * MS;
		p->jitter = (hrt_time_t)(rnd(seed) % 8) * SEC / 2;
		p->window_pct = (unsigned)(rnd(seed) % 3) * 50;
		p->periodic = (int)(rnd(seed) & 1);
		p->meddle = (int)(rnd(seed) & 1);
		fill(p, seed, any, O_NOPS);
		break;
	}
}

/* A mutant of p: a run of one op (repeats are what adversaries make), new
 * arguments in a stretch, or another shape. */
static void mutate(struct program *p, uint64_t *seed)
{
	int at = (int)(rnd(seed) % OPS), len = 1 + (int)(rnd(seed) % 200);

	switch (rnd(seed) % 3) {
	case 0: {
		unsigned char op = (unsigned char)(rnd(seed) % O_NOPS);

		for (int k = at; k < OPS && k < at + len; k++)
			p->step[k].op = op;
		break;
	}
	case 1:
		for (int k = at; k < OPS && k < at + len; k++)
			p->step[k].arg = (uint32_t)rnd(seed);
		break;
	default:
		p->jitter = (hrt_time_t)(rnd(seed) % 9) * SEC / 2;
		p->window_pct = (unsigned)(rnd(seed) % 3) * 50;
		p->meddle = (int)(rnd(seed) & 1);
		p->periodic = (int)(rnd(seed) & 1);
		break;
	}
	p->name = "hill-climb";
}

static int worse(const struct score *a, const struct score *b)
{
	if (a->max_scanned != b->max_scanned)
		return a->max_scanned > b->max_scanned;
	return a->tree_ops * b->ops >= b->tree_ops * a->ops;
}

static uint64_t master_seed = 47;
static struct program progs[2];

static void report(const struct score *sc, const char *name, int real)
{
	print_message("  %-60s %-7s max %3llu scanned in one op (op %4d), %.2f tree ops and "
		      "%.2f nodes an op\n", name, real ? "fd" : "virtual",
		      (unsigned long long)sc->max_scanned, sc->worst_op,
		      (double)sc->tree_ops / (double)sc->ops, (double)sc->nodes / (double)sc->ops);
}

static void test_no_searched_op_program_scans_past_the_bound(void **state)
{
	struct program *best = &progs[0], *cand = &progs[1];
	struct score sb, sc;
	uint64_t seed = master_seed;
	char label[96];

	(void)state;
	print_message("  seed %llu (replay: build/tests/test_op_search %llu); bound %d scanned a "
		      "search\n", (unsigned long long)master_seed, (unsigned long long)master_seed,
		      HRT_WHEEL_SCAN_MAX);
	memset(&sb, 0, sizeof(sb));
	for (int which = 0; which < 12; which++) {
		seed_program(cand, which, &seed);
		for (int real = 0; real < (which < 4 ? 2 : 1); real++) {
			snprintf(label, sizeof(label), "program %d, %s", which, cand->name);
			run_program(cand, real, &sc, label);
			report(&sc, cand->name, real);
			if (!real && (which == 0 || worse(&sc, &sb))) {
				*best = *cand;
				sb = sc;
			}
		}
	}
	for (int gen = 0; gen < 24; gen++) {
		*cand = *best;
		mutate(cand, &seed);
		snprintf(label, sizeof(label), "hill-climb generation %d", gen);
		run_program(cand, 0, &sc, label);
		if (worse(&sc, &sb)) {
			*best = *cand;
			sb = sc;
		}
	}
	report(&sb, "worst found by the hill-climb", 0);
}

/* W5's bound: early, never late, and one wake-up makes it exact -------- */

#define NF 300                  /* far timers in one slot: more than a search scans */
static struct hrt_timer far[NF], tie_x, tie_p;
static struct hrt_base *tb;
static hrt_time_t tie_at;
static int tie_case;            /* 0: x started before p's restart; 1: after */
static char order[4];
static int n_order;
static hrt_time_t asked;        /* the next event p's callback was told */

static enum hrt_restart note(struct hrt_timer *t, hrt_time_t now)
{
	(void)now;
	if (n_order < 3)
		order[n_order++] = t == &tie_x ? 'x' : 'p';
	return HRT_NORESTART;
}

static enum hrt_restart far_cb(struct hrt_timer *t, hrt_time_t now)
{
	(void)t, (void)now;
	return HRT_NORESTART;
}

/* The far timer with the least hard expiry still queued, or -1. */
static int far_least(void)
{
	int least = -1;

	for (int i = 0; i < NF; i++)
		if (hrt_timer_is_queued(&far[i]) == 1 &&
		    (least < 0 || tv_hard(&far[i]) < tv_hard(&far[least])))
			least = i;
	return least;
}

/* p's first run: it starts itself again at the tie (it ran in this pass:
 * the park), x is started after it in case 1, then the slot's earliest
 * far timer is cancelled and the next event asked: the slot (more than a
 * search scans, in no order) answers with its bound, and nothing moves. */
static int p_ran;

static enum hrt_restart p_first(struct hrt_timer *t, hrt_time_t now)
{
	if (p_ran++)
		return note(t, now);
	assert_int_equal(hrt_timer_start(t, tb, tie_at, HRT_MODE_ABS), 0);
	if (tie_case == 1)
		assert_int_equal(hrt_timer_start(&tie_x, tb, tie_at, HRT_MODE_ABS), 0);
	assert_int_equal(hrt_timer_cancel(&far[far_least()]), 1);
	assert_int_equal(hrt_base_next_event(tb, &asked), 1);
	return HRT_NORESTART;
}

/*
 * A slot of NF far timers in no order loses its earliest, in a pass (with
 * a restarted timer in the park that ties with another: the tie rule, S1,
 * both ways round) and outside one.  The next event is the slot's bound:
 * at or before the true one (never late), past the horizon, with no far
 * timer moved and at most a search's scan; a pass at that instant (the
 * one early wake-up) moves the horizon past the slot's start, and the
 * next event is exact again.  The cases that broke the rule in 1.3's
 * first cut: one query moved the slot whole into the tree.
 */
static void test_a_big_slot_answers_early_never_late_then_exact(void **state)
{
	(void)state;
	for (tie_case = 0; tie_case < 2; tie_case++) {
		struct hrt_stats s0, s1;
		hrt_time_t when = 0, exact;
		int least;

		tb = tv_virtual(0);
		assert_non_null(tb);
		tie_at = 30 * SEC + 150 * 1000;
		for (int i = 0; i < NF; i++) {  /* one slot, hard expiries in no order */
			assert_int_equal(hrt_timer_init(&far[i], far_cb), 0);
			assert_int_equal(hrt_timer_start(&far[i], tb, 30 * SEC +
							 (hrt_time_t)(i * 7919 % NF) * 1000,
							 HRT_MODE_ABS), 0);
		}
		assert_int_equal(hrt_timer_init(&tie_x, note), 0);
		assert_int_equal(hrt_timer_init(&tie_p, p_first), 0);
		if (tie_case == 0)
			assert_int_equal(hrt_timer_start(&tie_x, tb, tie_at, HRT_MODE_ABS), 0);
		assert_int_equal(hrt_timer_start(&tie_p, tb, MS, HRT_MODE_ABS), 0);
		n_order = 0;
		p_ran = 0;
		assert_int_equal(hrt_base_get_stats(tb, &s0, sizeof(s0)), 0);
		assert_int_equal(hrt_base_run(tb, MS, 0), 1);
		/* In the pass: early (the cancelled one's), never late. */
		least = far_least();
		assert_true(asked <= tv_hard(&far[least]));
		assert_true(asked >= 30 * SEC);
		/* Outside it: the same bound, again with no scan past the
		 * budget and no far timer moved. */
		assert_int_equal(hrt_base_next_event(tb, &when), 1);
		assert_true(when <= tv_hard(&far[least]) && when >= 30 * SEC);
		assert_int_equal(hrt_timer_cancel(&far[least]), 1);
		least = far_least();
		exact = tv_hard(&far[least]);
		assert_int_equal(hrt_base_next_event(tb, &when), 1);
		assert_true(when <= exact && when >= 30 * SEC);
		assert_int_equal(hrt_base_get_stats(tb, &s1, sizeof(s1)), 0);
		assert_int_equal(s1.wheel_moves - s0.wheel_moves, 0);
		assert_true(s1.wheel_scanned - s0.wheel_scanned <= 3 * HRT_WHEEL_SCAN_MAX);
		assert_int_equal(hrt_base_check(tb, NULL, 0), 0);
		/* The early wake-up: nothing due, and exact after it. */
		assert_int_equal(hrt_base_run(tb, when, 0), 0);
		assert_int_equal(hrt_base_next_event(tb, &when), 1);
		assert_int_equal(when, exact);
		assert_int_equal(hrt_base_check(tb, NULL, 0), 0);
		assert_true(hrt_base_run(tb, tie_at, 0) >= 2);
		order[n_order] = 0;
		print_message("  tie queued %s the restart: ran %s\n", tie_case ? "after" : "before",
			      order);
		assert_string_equal(order, tie_case ? "px" : "xp");
		for (int i = 0; i < NF; i++)
			hrt_timer_cancel(&far[i]);
		assert_int_equal(hrt_base_free(tb), 0);
	}
}

int main(int argc, char **argv)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_searched_op_program_scans_past_the_bound),
		cmocka_unit_test(test_a_big_slot_answers_early_never_late_then_exact),
	};

	if (argc > 1)
		master_seed = strtoull(argv[1], NULL, 0);
	setvbuf(stdout, NULL, _IOLBF, 0);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
