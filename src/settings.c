/* SPDX-License-Identifier: MIT */
/*
 * settings.c - a base's policies, in one place: the greedy policy (which
 * passes walk the tree for every soft-expired timer), the bound on one
 * pass (pass.c reads both once per pass) and coalescing (whether
 * hrt_base_loop sleeps with the window as slack; loop.c reads it when it
 * starts).  Plain words set without the lock, so a callback may set them;
 * none changes a pass or a loop in progress.
 */
#include "guard.h"

HRT_EXTERN int hrt_base_set_greedy(struct hrt_base *b, enum hrt_greedy policy)
{
	int err = base_guard(b, G_CHANGE, policy != HRT_GREEDY_OFF &&
			     policy != HRT_GREEDY_IDLE && policy != HRT_GREEDY_ALWAYS);

	if (err)
		return err;
	__atomic_store_n(&b->greedy, (int)policy, __ATOMIC_RELAXED);
	return 0;
}

HRT_EXTERN int hrt_base_get_greedy(const struct hrt_base *b)
{
	int err = base_guard(b, G_QUERY, 0);

	return err ? err : __atomic_load_n(&b->greedy, __ATOMIC_RELAXED);
}

HRT_EXTERN int hrt_base_set_coalesce(struct hrt_base *b, int on)
{
	int err = base_guard(b, G_CHANGE, 0);

	if (err)
		return err;
	__atomic_store_n(&b->coalesce, on ? 1 : 0, __ATOMIC_RELAXED);
	return 0;
}

int hrt__base_coalesce(const struct hrt_base *b)
{
	return __atomic_load_n(&b->coalesce, __ATOMIC_RELAXED);
}

HRT_EXTERN int hrt_base_get_coalesce(const struct hrt_base *b)
{
	int err = base_guard(b, G_QUERY, 0);

	return err ? err : __atomic_load_n(&b->coalesce, __ATOMIC_RELAXED);
}

HRT_EXTERN int hrt_base_set_pass_limit(struct hrt_base *b, unsigned callbacks, hrt_time_t ns)
{
	int err = base_guard(b, G_CHANGE, ns < 0);

	if (err)
		return err;
	__atomic_store_n(&b->pass_max_run, callbacks, __ATOMIC_RELAXED);
	__atomic_store_n(&b->pass_max_ns, ns, __ATOMIC_RELAXED);
	return 0;
}

HRT_EXTERN int hrt_base_get_pass_limit(const struct hrt_base *b, unsigned *callbacks,
				       hrt_time_t *ns)
{
	int err = base_guard(b, G_QUERY, !callbacks || !ns);

	if (err)
		return err;
	*callbacks = __atomic_load_n(&b->pass_max_run, __ATOMIC_RELAXED);
	*ns = __atomic_load_n(&b->pass_max_ns, __ATOMIC_RELAXED);
	return 0;
}
