/* SPDX-License-Identifier: MIT */
/*
 * ngx_event_hrt.h - the timer an nginx event embeds when its timers run on
 * libhrt (contrib/nginx/).  build.sh copies it into src/event/ and makes
 * ngx_event.h include it, and ngx_event_t's `timer` member of this type
 * in place of the red-black tree node.
 *
 * It has to be a type of its own, not a pointer to a timer kept elsewhere:
 * timers are intrusive (no allocation on ngx_add_timer) and a struct
 * hrt_timer is 64 bytes where nginx's tree node was 40, so every event
 * grows by 32 bytes (64 a connection).  `key` keeps nginx's own view of
 * the expiry (ngx_current_msec + timer, ms) for code that prints it.
 */
#ifndef NGX_EVENT_HRT_H_INCLUDED
#define NGX_EVENT_HRT_H_INCLUDED

#include <hrt.h>

typedef struct {
	struct hrt_timer  hrt;
	ngx_msec_t        key;          /* the soft expiry, in nginx's clock */
	unsigned          counted:1;    /* in the count of non-cancelable timers */
} ngx_event_timer_node_t;

#endif /* NGX_EVENT_HRT_H_INCLUDED */
