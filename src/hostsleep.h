/* SPDX-License-Identifier: MIT */
/*
 * hostsleep.h - the host plan's state (internal; hostsleep.c owns it):
 * lifecycle.c makes one per base and frees it; the base only keeps the
 * pointer (base.h, hrt__base_host), as it keeps the loop's.
 */
#ifndef HRT_HOSTSLEEP_H
#define HRT_HOSTSLEEP_H

struct hrt_host;

/* A new plan state (no planner), or NULL; its free. */
struct hrt_host *hrt__host_new(void);
void hrt__host_free(struct hrt_host *h);

#endif /* HRT_HOSTSLEEP_H */
