/* SPDX-License-Identifier: MIT */
/*
 * replay_impl.h - the replay model's state, shared by its four files
 * (internal to tools/replay/): replay_model.c (the state, live timers, the
 * events applied and the replay_model_* API), replay_devices.c (each CPU's
 * device, the heaps), replay_widen.c (what --slack widens),
 * replay_chains.c (sleep chains), replay_optimum.c (the offline optimum)
 * and replay_groups.c (attribution groups, forks and the top tables).  What the
 * model is and its invariants: replay_model.c's header and docs/REPLAY.md.
 */
#ifndef HRT_TOOLS_REPLAY_IMPL_H
#define HRT_TOOLS_REPLAY_IMPL_H

#include <stdint.h>

#include "hist.h"
#include "replay.h"
#include "slack.h"

#define L_ARMED  1u     /* an arming is open (no cancel yet, no later start) */
#define L_KDONE  2u     /* the kernel expired or cancelled this arming */
#define L_STARTED 4u    /* l->cpu is valid */
#define L_GRACE  8u     /* opt timer: waiting GRACE for the kernel's expiry */
#define GRACE    1000000000LL

struct replay;

/* A relative re-arm of a task's sleep (sleep chains, above). */
struct sleep {
	hrt_time_t gap, dsoft, dhard;           /* start - the kernel's run of the
						 * sleep before; soft, hard - start */
	uint32_t grp[RP_NBY];
};

struct task {
	struct replay *rp;
	int32_t tid;
	int cpu;
	int kran;                               /* the kernel ran its last sleep, at krun */
	hrt_time_t krun;
	uint64_t root, last;                    /* timer ids: the sleep the chain began
						 * with (armed where recorded), the last */
	struct hrt_timer t[RP_NPOL];            /* each policy's run of the chain */
	hrt_time_t psoft[RP_NPOL], phard[RP_NPOL];
	uint32_t grp[RP_NPOL][RP_NBY];          /* who t[p]'s sleep counts for */
	int busy[RP_NPOL];                      /* p has not run the last sleep it has */
	hrt_time_t run[RP_NPOL];                /* else: when it ran it */
	struct sleep *q;                        /* the re-arms, read by each policy */
	size_t head[RP_NPOL], n, cap;
};

struct live {
	struct hrt_timer t[RP_NPOL];
	struct hrt_timer opt;                   /* the arming's window end, as recorded */
	struct replay *rp;
	uint64_t id;
	hrt_time_t soft_eff, hard_eff;          /* max(soft, start), max(hard, start) */
	hrt_time_t hard_rec;                    /* hard_eff before --slack widened it */
	uint32_t fn;
	uint32_t grp[RP_NBY];                   /* group index per table */
	int act;                                /* RP_ACT_* of fn */
	int32_t tid;                            /* a sleep's task (chains), else 0 */
	int cpu;
	unsigned flags;
	struct live *next_free;
};

struct rcpu {
	int seen, idle;                         /* idle from the trace */
	hrt_time_t floor;                       /* last event applied */
	struct hrt_base *base[RP_NPOL];
	hrt_time_t dev[RP_NPOL];                /* device due time, MAX: none */
	hrt_time_t stab;                        /* optimum: last stab point */
	int stabbed;
	hrt_time_t stabp[RP_NPOL];              /* the same for each policy's windows */
	int stabbedp[RP_NPOL];
	int kwake_valid;
	hrt_time_t kwake_now;                   /* kernel row: last now= */
	uint64_t unresolved;
	int hpos[RP_NPOL];                      /* index in the device heap */
};

/* One attribution group: key (see group_key), counts. */
struct group {
	uint64_t key;
	uint64_t w[RP_NPOL + 1];
	uint64_t unresolved;
	uint64_t opt_rec;                       /* the optimum's wake-ups, windows
						 * as recorded (replay_optimum.c) */
	uint64_t optp[RP_NPOL];                 /* ... as policy p ran them */
	uint64_t opt_rec_act[RP_NACT], optp_act[RP_NPOL][RP_NACT];     /* split */
	uint64_t opt;                           /* at the end: the lowest optp */
	int optbest;                            /* ... of that policy */
};

struct gtab {
	struct idmap map;                       /* key -> index + 1 */
	struct group *g;
	uint32_t n, cap;
};

struct replay {
	replay_name_fn name;                    /* fn and comm indices to strings */
	const void *src;
	struct replay_result *res;
	unsigned pol;
	enum replay_idle idle_mode;
	int perf;
	struct rcpu *cpu;
	int ncpu;
	int *heap[RP_NPOL];                     /* CPUs, earliest device first */
	int nheap;
	struct idmap live;
	struct live *free_list;
	struct hrt_base *optbase;
	const struct slack *slack;              /* NULL: windows as recorded */
	struct hrt_base *obase[RP_NPOL];        /* the windows each policy ran */
	struct owin *owin_free, *owin_blocks;
	uint64_t optp[RP_NPOL], optp_act[RP_NPOL][RP_NACT];
	uint8_t *sel;                           /* per fn/comm index: 0 ?, 1 no, 2 yes */
	size_t nsel;
	uint8_t *act;                           /* per fn index: RP_ACT_* + 1, 0 ? */
	size_t nact;
	uint64_t opt_rec_act[RP_NACT];
	struct hist late[RP_NPOL + 1], early[RP_NPOL + 1];    /* [RP_NPOL]: kernel */
	struct gtab gt[RP_NBY];
	struct idmap pname;                     /* tgid -> its name's index + 1 */
	struct idmap forks;                     /* child TID -> its fork's seq + 1 */
	struct fork *fork;                      /* forks of the last FORK_YOUNG, a ring */
	uint64_t fork_head, fork_tail, fork_cap;
	struct idmap tasks;                     /* tid -> struct task (sleep chains) */
	int keep;
	/* The pass in progress. */
	int cur_idle, cur_first, cur_cpu;
	int oom;                                /* a callback could not allocate */
};

/* The expiry callback of policy P's timer t[P] in a TYPE: HANDLER(obj, P,
 * now) (the three policies' timers of a task and of an arming). */
#define POLICY_CB(NAME, TYPE, HANDLER, P) \
	static enum hrt_restart NAME##_##P(struct hrt_timer *t, hrt_time_t now) \
	{ \
		HANDLER(HRT_CONTAINER_OF(t, TYPE, t[P]), P, now); \
		return HRT_NORESTART; \
	}

/* Group keys: bit 62 marks a kernel timer ("[kernel] FUNCTION"), bit 61
 * "no process in the trace" (hrt-trace v1), bit 60 a process by its
 * thread-group id (named through pname); else COMM << 32 | TID. */
#define G_KERNEL (1ULL << 62)
#define G_NONE   (1ULL << 61)
#define G_TGID   (1ULL << 60)

/* replay_devices.c */
void dev_update(struct replay *rp, int c, int p);
void heap_set(struct replay *rp, int p, int i, int c);
void fire_until(struct replay *rp, int p, hrt_time_t T);       /* every pass due by T */

/* replay_widen.c */
int fn_act(struct replay *rp, uint32_t fn);     /* RP_ACT_*, -1 out of memory */
/* The hard expiry the replay uses for the arming ev (widened when --slack
 * selects it) into *hard; 0, or -1 out of memory. */
int widened_hard(struct replay *rp, const struct trace_event *ev, hrt_time_t *hard);

/* replay_model.c */
void maybe_free(struct live *l);
void unresolved(struct live *l);
void count_run(struct replay *rp, int p, hrt_time_t soft, hrt_time_t hard,
	       const uint32_t grp[RP_NBY], int act, hrt_time_t now);

/* replay_chains.c */
struct task *task_find(const struct replay *rp, int32_t tid);
void chain_root_ran(struct replay *rp, const struct live *l, int p, hrt_time_t now);
int chain_start(struct replay *rp, struct live *l, const struct trace_event *ev,
		hrt_time_t hard, int *chained);

/* replay_optimum.c */
int opt_new(struct replay *rp);                 /* the bases: 0 or -errno */
enum hrt_restart cb_opt(struct hrt_timer *t, hrt_time_t now);  /* as recorded */
/* Policy p ran a window [soft, hard] of groups grp on CPU rp->cur_cpu at
 * now: one window of its optimum.  0 or -ENOMEM. */
int opt_run(struct replay *rp, int p, hrt_time_t soft, hrt_time_t hard, const uint32_t grp[RP_NBY],
	    int act, hrt_time_t now);
void opt_until(struct replay *rp, int p, hrt_time_t T);  /* stabs due by T */
void opt_end(struct replay *rp);                /* the result's figures */
int opt_of_group(const struct replay *rp, const struct group *g);   /* its lowest p */
void opt_free(struct replay *rp);

/* A fork (TEV_FORK): the child's TID, who started it - the process a group
 * key names (its TGID, or its TID in a trace without processes) and its
 * name - and when.  A process's wake-ups in its first FORK_YOUNG ns count
 * for the process that started it (replay_groups.c). */
#define FORK_YOUNG 1000000000LL
struct fork {
	int32_t child, parent;
	uint32_t pcomm;
	int ptgid;                              /* parent is a TGID (else a TID) */
	hrt_time_t t;
};

/* replay_groups.c */
int fork_seen(struct replay *rp, const struct trace_event *ev);       /* -ENOMEM */
void fork_free(struct replay *rp);
uint32_t group_get(struct gtab *t, uint64_t key);
int groups_of(struct replay *rp, const struct trace_event *ev, int cpu, uint32_t grp[RP_NBY]);
void count_wake(struct replay *rp, const uint32_t grp[RP_NBY], int col);
void group_name(const struct replay *rp, int by, uint64_t key, char *buf, size_t len);
void fill_by(struct replay *rp);

#endif
