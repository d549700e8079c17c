/* SPDX-License-Identifier: MIT */
/*
 * baselock.h - the biased lock (baselock.c says how and why it is
 * exclusive): its struct, its bits and its inline owner halves; and who is
 * calling - the thread, process and walk identities the lock and the
 * entry guard (guard.h) compare with.  Knows nothing of bases: a base
 * embeds one lock and adds its single-thread mode on top (base_priv.h).
 */
#ifndef HRT_BASELOCK_H
#define HRT_BASELOCK_H

#include <pthread.h>
#include <stdint.h>

struct hrt_base;

/* The owner's path reads the first four words only. */
struct hrt_bias_lock {
	int owner_in;                   /* the owner is inside; only it writes */
	unsigned pending;               /* BL_*; mutex holders write it */
	uint64_t bias;                  /* owner's hrt__thread_id, or BL_NO_BIAS */
	uint64_t owner_ops;             /* owner's fast entries; only it writes */
	uint64_t ops_seen;              /* owner_ops at the last fenced entry */
	uint64_t streak_id;             /* unbiased: who took the mutex last */
	unsigned streak, claim_after;   /* ... how often in a row; needed */
	unsigned waiters;               /* threads waiting on `done` */
	pthread_mutex_t mutex;
	pthread_cond_t done;            /* a callback returned (cancel waits) */
};

/* pending: while not 0 the owner takes the mutex too. */
#define BL_NO_BIAS  UINT64_MAX  /* no thread's id (ids count from 1; 0: none) */
#define BL_FOREIGN  1u          /* a foreign holder has shut the owner out */
#define BL_WAIT     2u          /* a thread waits on `done` */
#define BL_REVOKED  4u          /* until the owner gives the bias up */
#define BL_CLAIM_FIRST 16u      /* mutex takes in a row that claim the bias */

/* Who is calling ------------------------------------------------------- */

#if defined(__GNUC__)
#define HRT_TLS_IE __attribute__((tls_model("initial-exec"), visibility("hidden")))
#else
#define HRT_TLS_IE
#endif
/* The base whose hrt_base_walk_tree callback this thread is in (its lock
 * is held), or NULL.  Queries of it skip the lock; changes are refused. */
extern _Thread_local const struct hrt_base *hrt__walking HRT_TLS_IE;
/* This thread's identity as an owner of unlocked bases and of biases: 0
 * until it needs one (hrt__thread_id_get), then a number no other thread
 * of the process ever gets (a thread's address or its TLS block is reused
 * by later threads). */
extern _Thread_local uint64_t hrt__thread_id HRT_TLS_IE;
/* hrt__thread_id, but 0 inside a hrt_base_walk_tree callback: the fast
 * paths of start and cancel compare it with an unlocked base's owner or
 * a base's bias (neither is ever 0), one test for steps 2 and 3 of the
 * entry guard (guard.h). */
extern _Thread_local uint64_t hrt__change_id HRT_TLS_IE;
uint64_t hrt__thread_id_get(void);
/* This process's generation: bumped in the child of every fork()
 * (lifecycle.c's handler).  Here, at the bottom, because every layer that
 * touches an fd asks it (lifecycle.c, at the top, would be a cycle). */
extern unsigned hrt__fork_gen;

/* The lock -------------------------------------------------------------- */

/* 0, or -errno of the mutex or condition.  hrt__bl_destroy undoes it. */
int hrt__bl_init(struct hrt_bias_lock *l);
void hrt__bl_destroy(struct hrt_bias_lock *l);
void hrt__bl_lock_slow(struct hrt_bias_lock *l);
void hrt__bl_unlock_slow(struct hrt_bias_lock *l);
/* The mutex and the owner shut out, without the bias policy (fork, free). */
void hrt__bl_lock_full(struct hrt_bias_lock *l);
/* Lock held: wait for a broadcast of `done`; may return at once (callers
 * re-check, as after any condition wait).  hrt__bl_wake broadcasts it. */
void hrt__bl_wait(struct hrt_bias_lock *l);
static inline void hrt__bl_wake(struct hrt_bias_lock *l)
{
	if (l->waiters)
		pthread_cond_broadcast(&l->done);
}
/* lifecycle.c: register the heavy fence once per process; a fork's child
 * (this thread the only one, the mutex held by the fork handler). */
void hrt__baselock_init(void);
void hrt__bl_child(struct hrt_bias_lock *l);
/* Tests only: the fallback or a sticky bias; the heavy fences so far. */
void hrt__baselock_test_mode(int mode);
uint64_t hrt__baselock_test_fences(void);

/*
 * The owner's path (1: inside, the lock held; 0: nothing held): announce,
 * compiler barrier, look for a foreign holder.  The foreign side pairs a
 * store of `pending` and a membarrier with its read of owner_in, so one
 * of the two sees the other (baselock.c).
 */
static inline int hrt__bl_owner_enter(struct hrt_bias_lock *l, uint64_t id)
{
	if (__atomic_load_n(&l->bias, __ATOMIC_RELAXED) == id) {
		__atomic_store_n(&l->owner_in, 1, __ATOMIC_RELAXED);
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		if (__builtin_expect(!__atomic_load_n(&l->pending, __ATOMIC_ACQUIRE), 1)) {
			/* Plain (one add to memory): the foreign side reads it
			 * only once owner_in is 0 (acquire), or under the mutex
			 * the owner gave the bias up under. */
			l->owner_ops++;
			return 1;
		}
		__atomic_store_n(&l->owner_in, 0, __ATOMIC_RELEASE);
	}
	return 0;
}

/* Leaves what hrt__bl_owner_enter entered (the bias stays: L4). */
static inline void hrt__bl_owner_exit(struct hrt_bias_lock *l)
{
	__atomic_store_n(&l->owner_in, 0, __ATOMIC_RELEASE);
}

static inline void hrt__bl_lock(struct hrt_bias_lock *l)
{
	if (!hrt__bl_owner_enter(l, hrt__thread_id))
		hrt__bl_lock_slow(l);
}

static inline void hrt__bl_unlock(struct hrt_bias_lock *l)
{
	if (__atomic_load_n(&l->bias, __ATOMIC_RELAXED) == hrt__thread_id &&
	    __atomic_load_n(&l->owner_in, __ATOMIC_RELAXED)) {
		hrt__bl_owner_exit(l);
		return;
	}
	hrt__bl_unlock_slow(l);
}

#endif /* HRT_BASELOCK_H */
