/* SPDX-License-Identifier: MIT */
/* stub/ngx_core.h - logging, the cached clock and queues, as the timer
 * module uses them (see ngx_config.h).  The test defines the variables. */
#ifndef NGX_STUB_CORE_H
#define NGX_STUB_CORE_H

typedef struct ngx_log_s ngx_log_t;
typedef struct ngx_queue_s ngx_queue_t;
struct ngx_queue_s {
	ngx_queue_t *prev, *next;
};
#define ngx_queue_empty(h)  ((h) == (h)->prev)

typedef struct {
	ngx_log_t *log;
} ngx_cycle_t;

extern volatile ngx_cycle_t *ngx_cycle;
extern volatile ngx_msec_t ngx_current_msec;
void ngx_time_update(void);

#define NGX_LOG_EMERG        2
#define NGX_LOG_ALERT        3
#define NGX_LOG_DEBUG_EVENT  0x080
/* counts what the module logs; the test says how much it expects */
void ngx_stub_log(ngx_uint_t level, ngx_err_t err);
#define ngx_log_error(level, log, err, ...)  ((void) (log), ngx_stub_log(level, err))
#define ngx_log_debug2(level, log, err, fmt, a, b)  ((void) 0)
#define ngx_log_debug3(level, log, err, fmt, a, b, c)  ((void) 0)
#define ngx_errno  errno
#define ngx_set_errno(err)  (errno = (err))

#endif
