/* SPDX-License-Identifier: MIT */
/* stub/ngx_event.h - an event and a connection, with the fields the timer
 * module touches, the timer embedded as build.sh makes nginx's. */
#ifndef NGX_STUB_EVENT_H
#define NGX_STUB_EVENT_H

#include <ngx_event_hrt.h>

typedef struct ngx_event_s ngx_event_t;
typedef void (*ngx_event_handler_pt)(ngx_event_t *ev);

struct ngx_event_s {
	void *data;
	unsigned active:1;
	unsigned timedout:1;
	unsigned timer_set:1;
	unsigned cancelable:1;
	ngx_event_handler_pt handler;
	ngx_log_t *log;
	ngx_event_timer_node_t timer;
};

typedef struct {
	int fd;
	ngx_event_t *read, *write;
} ngx_connection_t;

#define ngx_event_ident(p)  ((ngx_connection_t *)(p))->fd
#define NGX_UPDATE_TIME  1

extern ngx_queue_t ngx_posted_events, ngx_posted_next_events;

#include <ngx_event_timer.h>

#endif
