/* SPDX-License-Identifier: MIT */
/*
 * verify.c - what verify.h's checks call in a VERIFY=1 build: the
 * amortised set check and the failure report.  Empty in a release build.
 */
#include "verify.h"

#ifdef HRT_VERIFY
#include <stdio.h>
#include <stdlib.h>

#include "timerset.h"

#define VERIFY_FULL 512

void hrt__verify_fail(const char *file, int line, const char *rule)
{
	fprintf(stderr, "hrt VERIFY: %s:%d: %s\n", file, line, rule);
	abort();
}

/* Per thread: the changes since the last whole check of a large set. */
static _Thread_local size_t changes;

const char *hrt__verify_set(const struct hrt_tset *ts)
{
	size_t n = hrt__tset_count(ts);

	if (n > VERIFY_FULL && ++changes < n)
		return NULL;
	changes = 0;
	return hrt__tset_check(ts);
}
void hrt__verify_queued(const char *file, int line, const struct hrt_tset *ts)
{
	static char why[256];
	const char *broken = hrt__tset_check(ts);

	if (!broken)
		return;
	snprintf(why, sizeof(why), "hrt_base_free of a base with queued timers: %s "
		 "(a timer freed while queued? cancel it first: hrt_timer_cancel)", broken);
	hrt__verify_fail(file, line, why);
}
#else
typedef int hrt__verify_empty;  /* ISO C wants a declaration */
#endif
