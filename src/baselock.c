/* SPDX-License-Identifier: MIT */
/*
 * baselock.c - the base's lock: a mutex biased to one thread, the owner,
 * whose calls take no mutex and no atomic read-modify-write.  The struct
 * and the inline owner halves are in baselock.h; here are the paths that
 * take the mutex, the bias's hand-over and the heavy fence.  A base
 * embeds one (base_priv.h); nothing here knows what a base is.
 *
 * Why it is exclusive (a Dekker handshake with asymmetric fences):
 *   owner:   owner_in = 1; compiler barrier; read pending   (0: inside)
 *   foreign: mutex; pending |= FOREIGN; membarrier; wait until !owner_in
 * membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) runs a full memory barrier
 * on every CPU running a thread of this process before it returns (a
 * thread not running passes one when it is switched in), so it splits the
 * owner's two steps somewhere: after both, its owner_in = 1 is visible to
 * the foreign read, which waits; before the read, the read sees pending.
 * Whoever comes second backs off.  The data itself is ordered by release
 * and acquire: the owner's owner_in = 0 against the foreign wait, the
 * foreign's clearing of pending (at unlock, under the mutex) against the
 * owner's read of it.  Everyone but the owner also takes the mutex, so
 * foreign callers, and the owner when pending is set, exclude each other
 * as before.
 *
 * The invariants:
 *   L1. owner_in and owner_ops are written by the bias's thread only.
 *   L2. bias, pending and the streak change only under the mutex.
 *   L3. pending != 0 means no owner is inside on its fast path, nor can
 *       enter it: it was set by a holder that shut the owner out, and it
 *       stays set while a thread waits on `done` (a wait drops the mutex,
 *       not the exclusion) or until the owner takes a revocation back.
 *   L4. Only the owner gives its bias up (bias = BL_NO_BIAS, under the
 *       mutex), and a thread claims it only from BL_NO_BIAS, so no thread
 *       can act on a stale bias: a reader sees its own id only while it
 *       is the owner.  (A foreign thread cannot take the bias over: the
 *       owner may be between reading bias and writing owner_in, for as
 *       long as it stays preempted.)
 *
 * Policy.  A base starts with no owner; the thread that takes the mutex
 * claim_after times in a row with nobody between becomes its owner.  A
 * foreign call costs a membarrier (microseconds) while the owner is busy;
 * if the owner made fewer than BL_REVOKE_OPS fast calls since the last
 * fenced one, the foreign thread revokes the bias (pending keeps
 * BL_REVOKED, so later foreign calls take the mutex alone, and the owner
 * does too), the owner gives the bias up at its next call, and claiming it
 * again takes twice as long.  An owner that never calls again (gone)
 * leaves the base a plain mutex.  Without membarrier (ENOSYS, EPERM in a
 * container, a kernel before 4.14) no base is ever biased.
 *
 * TSan sees the mutex and the acquire/release pairs above, which carry
 * every happens-before edge the data needs; it cannot see the membarrier,
 * which adds no edge but is what makes two holders impossible: if it were
 * missing, TSan would see both inside at once and report the race.
 */
#include <linux/membarrier.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <errno.h>

#include "baselock.h"

_Thread_local uint64_t hrt__thread_id HRT_TLS_IE;
_Thread_local uint64_t hrt__change_id HRT_TLS_IE;
_Thread_local const struct hrt_base *hrt__walking HRT_TLS_IE;
unsigned hrt__fork_gen;

#define BL_CLAIM_MAX   4096u
#define BL_REVOKE_OPS  256u             /* owner calls a fence is worth */

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

static uint64_t thread_ids;
static int heavy_ok;                    /* membarrier registered */
static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int test_mode;                   /* hrt__baselock_test_mode */
static uint64_t fences;                 /* for the tests */

uint64_t hrt__thread_id_get(void)
{
	if (!hrt__thread_id) {
		hrt__thread_id = __atomic_add_fetch(&thread_ids, 1, __ATOMIC_RELAXED);
		if (!hrt__walking)
			hrt__change_id = hrt__thread_id;
	}
	return hrt__thread_id;
}

int hrt__bl_init(struct hrt_bias_lock *l)
{
	int err;

	l->bias = BL_NO_BIAS;
	l->claim_after = BL_CLAIM_FIRST;
	if ((err = pthread_mutex_init(&l->mutex, NULL)))
		return -err;
	if ((err = pthread_cond_init(&l->done, NULL))) {
		pthread_mutex_destroy(&l->mutex);
		return -err;
	}
	return 0;
}

void hrt__bl_destroy(struct hrt_bias_lock *l)
{
	pthread_cond_destroy(&l->done);
	pthread_mutex_destroy(&l->mutex);
}

static void init(void)
{
	if (syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0)
		__atomic_store_n(&heavy_ok, 1, __ATOMIC_RELAXED);
}

void hrt__baselock_init(void)
{
	pthread_once(&init_once, init);
}

/* Tests: 1, no base gets a bias from now on, as if registering
 * membarrier had failed (the fallback: the mutex alone); 2, a bias is
 * never revoked (every foreign call fences); 0, the policy. */
void hrt__baselock_test_mode(int mode)
{
	__atomic_store_n(&test_mode, mode, __ATOMIC_RELAXED);
}

/* Tests: the number of heavy fences issued so far. */
uint64_t hrt__baselock_test_fences(void)
{
	return __atomic_load_n(&fences, __ATOMIC_RELAXED);
}

/*
 * The heavy half.  Registered before any base got a bias, and registration
 * survives fork(), so the private command does not fail on any kernel we
 * know; but a process restored by checkpoint/restore may come back
 * unregistered: register again and retry, then try the global command
 * (no registration; slow, and refused only on nohz_full systems).  If
 * both fail no bias is claimed from then on, and this one exclusion
 * relies on the owner having left: the one case not proven, reachable
 * only if the kernel loses a registration it granted.
 */
static void heavy_fence(void)
{
	__atomic_add_fetch(&fences, 1, __ATOMIC_RELAXED);
	if (syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0)
		return;
	if (syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0 &&
	    syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0)
		return;
	if (syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) == 0)
		return;
	__atomic_store_n(&heavy_ok, 0, __ATOMIC_RELAXED);
}

/* Mutex held, a foreign thread on a biased base: shut the owner out;
 * revoke: and apply the policy (a fork handler or a free does not). */
static void exclude_owner(struct hrt_bias_lock *l, int revoke)
{
	uint64_t ops;
	int spins = 0;

	if (l->pending)                 /* L3: shut out already */
		return;
	__atomic_store_n(&l->pending, BL_FOREIGN, __ATOMIC_RELAXED);
	heavy_fence();
	while (__atomic_load_n(&l->owner_in, __ATOMIC_ACQUIRE)) {
		if (++spins < 1024) {
			cpu_relax();
		} else {        /* preempted inside, or a long walk: sleep, so
				 * that an owner waiting for our CPU gets it
				 * (sched_yield kept it for a whole tick) */
			struct timespec ts = { 0, 1000 };

			nanosleep(&ts, NULL);
		}
	}
	if (!revoke)
		return;
	ops = __atomic_load_n(&l->owner_ops, __ATOMIC_RELAXED);
	if (ops - l->ops_seen < BL_REVOKE_OPS && __atomic_load_n(&test_mode, __ATOMIC_RELAXED) != 2)
		__atomic_store_n(&l->pending, BL_FOREIGN | BL_REVOKED, __ATOMIC_RELAXED);
	l->ops_seen = ops;
}

/* Mutex held, no owner: count the streak; a long one makes us the owner. */
static void maybe_claim(struct hrt_bias_lock *l)
{
	uint64_t me;

	if (!__atomic_load_n(&heavy_ok, __ATOMIC_RELAXED) ||
	    __atomic_load_n(&test_mode, __ATOMIC_RELAXED) == 1)
		return;
	me = hrt__thread_id_get();
	if (l->streak_id != me) {
		l->streak_id = me;
		l->streak = 1;
		return;
	}
	if (++l->streak < l->claim_after)
		return;
	l->streak = 0;
	l->ops_seen = __atomic_load_n(&l->owner_ops, __ATOMIC_RELAXED);
	__atomic_store_n(&l->bias, me, __ATOMIC_RELAXED);
}

void hrt__bl_lock_slow(struct hrt_bias_lock *l)
{
	uint64_t bias;

	pthread_mutex_lock(&l->mutex);
	bias = l->bias;
	if (bias == BL_NO_BIAS) {
		maybe_claim(l);
	} else if (bias == hrt__thread_id) {
		if (l->pending & BL_REVOKED) {          /* L4: give it up */
			__atomic_store_n(&l->bias, BL_NO_BIAS, __ATOMIC_RELAXED);
			__atomic_store_n(&l->pending, l->pending & ~BL_REVOKED,
					 __ATOMIC_RELAXED);
			l->streak_id = 0;
			if (l->claim_after < BL_CLAIM_MAX)
				l->claim_after *= 2;
		}
	} else {
		exclude_owner(l, 1);
	}
}

/* The mutex, and the owner (if another thread) shut out, with no policy:
 * no claim, no revocation.  For the fork handler and hrt_base_free, which
 * must serialise behind every call in progress but are no sign of who
 * uses the base. */
void hrt__bl_lock_full(struct hrt_bias_lock *l)
{
	uint64_t bias;

	pthread_mutex_lock(&l->mutex);
	bias = l->bias;
	if (bias != BL_NO_BIAS && bias != hrt__thread_id)
		exclude_owner(l, 0);
}

/* pending's new value: a revocation stays, a waiter keeps the owner out. */
static unsigned pending_after(const struct hrt_bias_lock *l)
{
	return (l->pending & BL_REVOKED) | (l->waiters ? BL_WAIT : 0);
}

void hrt__bl_unlock_slow(struct hrt_bias_lock *l)
{
	unsigned p = pending_after(l);

	if (p != l->pending)            /* the owner's acquire pairs with it */
		__atomic_store_n(&l->pending, p, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&l->mutex);
}

void hrt__bl_wait(struct hrt_bias_lock *l)
{
	if (__atomic_load_n(&l->bias, __ATOMIC_RELAXED) == hrt__thread_id &&
	    __atomic_load_n(&l->owner_in, __ATOMIC_RELAXED)) {
		/* The owner holds no mutex to wait with: take it and let the
		 * caller look again (state may have changed in between). */
		__atomic_store_n(&l->owner_in, 0, __ATOMIC_RELEASE);
		hrt__bl_lock_slow(l);
		return;
	}
	if (!(l->pending & BL_WAIT))    /* L3 across the wait */
		__atomic_store_n(&l->pending, l->pending | BL_WAIT, __ATOMIC_RELAXED);
	pthread_cond_wait(&l->done, &l->mutex);
}

/* A fork's child, this thread the only one, l's mutex held by the fork
 * handler: the owners that were other threads are gone (none was inside:
 * the handler shut them out), so their bases have no owner. */
void hrt__bl_child(struct hrt_bias_lock *l)
{
	if (l->bias != hrt__thread_id || !__atomic_load_n(&heavy_ok, __ATOMIC_RELAXED)) {
		l->bias = BL_NO_BIAS;
		l->owner_in = 0;
		l->streak_id = 0;
		l->pending = 0;         /* a revocation of a gone owner */
	}
}
