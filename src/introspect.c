/* SPDX-License-Identifier: MIT */
/*
 * introspect.c - looking at a base without changing what it will do: the
 * count, the stats, the tree walk and the consistency check.  Queries take
 * the base lock unless this thread holds it already (a query from a walk
 * callback, guard.h); the walk holds it across its callbacks, so the
 * callback sees a set that cannot change.  Also, for the base's clients
 * above (the loop, the host plan), which may not look inside it: its entry
 * guard, its kind and the states it keeps for them (base.h).
 */
#include <string.h>

#include "clock.h"
#include "guard.h"

HRT_EXTERN ssize_t hrt_base_count(const struct hrt_base *b)
{
	int locked = base_guard(b, G_QUERY, 0);

	if (locked)
		return locked;
	locked = query_lock(b);
	return (ssize_t)query_unlock_count(b, locked);
}

/* The caller's struct may be older (shorter) or newer (longer) than ours:
 * the common prefix is copied, the rest of theirs zeroed. */
HRT_EXTERN int hrt_base_get_stats(const struct hrt_base *b, struct hrt_stats *out, size_t size)
{
	struct hrt_stats st;
	int locked = base_guard(b, G_QUERY, !out || !size || size % 8);

	if (locked)
		return locked;
	locked = query_lock(b);
	st = b->stats;
	base_for_each_set(b, ts)
		hrt__tset_get_stats(ts, &st);
	query_unlock(b, locked);
	memcpy(out, &st, size < sizeof(st) ? size : sizeof(st));
	if (size > sizeof(st))
		memset((char *)out + sizeof(st), 0, size - sizeof(st));
	return 0;
}

HRT_EXTERN int hrt_base_reset_stats(struct hrt_base *b)
{
	int err = base_guard(b, G_CHANGE, 0);

	if (err)
		return err;
	base_lock(b);
	memset(&b->stats, 0, sizeof(b->stats));
	base_for_each_set(b, ts)
		hrt__tset_reset_stats(ts);
	base_unlock(b);
	return 0;
}

HRT_EXTERN ssize_t hrt_base_walk_tree(struct hrt_base *b,
				      void (*fn)(const struct hrt_tree_node *n, void *ctx),
				      void *ctx)
{
	const struct hrt_base *outer = hrt__walking;
	size_t n = 0;
	int err = base_guard(b, G_QUERY, !fn);

	if (err)
		return err;
	if (outer && outer != b)        /* b's lock after outer's: may deadlock */
		return -EDEADLK;
	if (!outer) {
		base_lock(b);
		/* Every far timer into the tree: it shows them, and the wheel
		 * stays empty while fn runs (nothing may start), so a query
		 * from fn (next_event) never changes the tree being walked. */
		base_for_each_set(b, ts) {
			hrt__tset_gather(ts);
			verify_set(ts);
		}
		hrt__walking = b;
		hrt__change_id = 0;
	}
	/* A split base: the absolute set, then the relative one. */
	base_for_each_set(b, ts)
		n += hrt__tset_walk(ts, fn, ctx);
	if (!outer) {
		hrt__walking = NULL;
		hrt__change_id = hrt__thread_id;
		base_unlock(b);
	}
	return (ssize_t)n;
}

HRT_EXTERN int hrt_base_check(const struct hrt_base *b, char *why, size_t len)
{
	const char *w = NULL;
	int locked = base_guard(b, G_QUERY, 0);

	if (locked)
		return locked;
	locked = query_lock(b);
	base_for_each_set(b, ts) {
		if (!w)
			w = hrt__tset_check(ts);
		if (!w && ts->owner != b)
			w = "a set that does not name its base";
	}
	query_unlock(b, locked);
	if (!w)
		return 0;
	if (why && len) {
		size_t n = strlen(w) < len - 1 ? strlen(w) : len - 1;

		memcpy(why, w, n);
		why[n] = '\0';
	}
	return -EUCLEAN;
}

/* For the clients ------------------------------------------------------- */

int hrt__base_guard_fd(const struct hrt_base *b)
{
	return base_guard(b, G_FD, 0);
}

struct hrt_loop *hrt__base_loop(struct hrt_base *b)
{
	return b->loop;
}

struct hrt_host *hrt__base_host(struct hrt_base *b)
{
	return b->host;
}

int hrt__base_is_virtual(const struct hrt_base *b)
{
	return base_is_virtual(b);
}
