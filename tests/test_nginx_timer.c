/* SPDX-License-Identifier: MIT */
/*
 * test_nginx_timer.c - contrib/nginx/ngx_event_timer.c (nginx's event
 * timers on hrt) against the stub of nginx's interface in
 * contrib/nginx/stub/, so it is compiled and checked with no nginx source:
 * the window rule, the lazy re-arm, del as a cancel, the expiry as a pass
 * (greedy when idle), a handler that sets its own timer again, the count
 * graceful shutdown waits for, and the epoll hook's timeout (epoll_wait
 * wrapped: the timeout it was given is recorded, the call made).
 * nginx-tests on a real nginx: contrib/nginx/test.sh.
 */
#include <sys/eventfd.h>
#include <time.h>

#include "unit.h"

#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_event.h>

#include "../contrib/nginx/ngx_event_timer.c"

/* --- what nginx would provide --------------------------------------------- */

volatile ngx_msec_t ngx_current_msec;
static ngx_cycle_t cycle;
volatile ngx_cycle_t *ngx_cycle = &cycle;
ngx_queue_t ngx_posted_events = { &ngx_posted_events, &ngx_posted_events };
ngx_queue_t ngx_posted_next_events = { &ngx_posted_next_events, &ngx_posted_next_events };
static int logged, time_updates;

void ngx_stub_log(ngx_uint_t level, ngx_err_t err)
{
	print_message("logged: level %lu, error %d\n", (unsigned long)level, err);
	logged++;
}

static ngx_msec_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (ngx_msec_t)ts.tv_sec * 1000 + (ngx_msec_t)(ts.tv_nsec / 1000000);
}

/* nginx's: the cached clock from the real one (only the epoll test and a
 * pass ahead of the cache call it). */
void ngx_time_update(void)
{
	time_updates++;
	ngx_current_msec = mono_ms();
}

/* epoll_wait, wrapped: the timeout the hook asked for. */
int __real_epoll_wait(int ep, struct epoll_event *ev, int n, int timeout);
static int last_timeout = -2;
int __wrap_epoll_wait(int ep, struct epoll_event *ev, int n, int timeout);
int __wrap_epoll_wait(int ep, struct epoll_event *ev, int n, int timeout)
{
	last_timeout = timeout;
	return __real_epoll_wait(ep, ev, n, timeout);
}

/* --- events ------------------------------------------------------------------ */

struct tev {
	ngx_event_t ev;
	ngx_connection_t c;
	int runs;
	ngx_msec_t ran_at;
	ngx_msec_t again;       /* the handler sets its timer again for this long */
};

static void on_timer(ngx_event_t *ev)
{
	struct tev *t = HRT_CONTAINER_OF(ev, struct tev, ev);

	assert_true(ev->timedout);
	assert_false(ev->timer_set);
	t->runs++;
	t->ran_at = ngx_current_msec;
	if (t->again) {
		ngx_msec_t a = t->again;

		t->again = 0;
		ngx_event_add_timer(ev, a);
	}
}

static void tev_init(struct tev *t, int cancelable)
{
	memset(t, 0xa5, sizeof(*t));    /* nginx's events are not always zeroed */
	t->ev.timer_set = 0;
	t->ev.timedout = 0;
	t->ev.cancelable = cancelable ? 1 : 0;
	t->ev.handler = on_timer;
	t->ev.data = &t->c;
	t->ev.log = NULL;
	t->c.fd = 7;
	t->runs = 0;
	t->again = 0;
}

/* The clock of every test moves forward only (one base for the process). */
static ngx_msec_t t0;

static void run_at(ngx_msec_t ms)
{
	ngx_current_msec = t0 + ms;
	ngx_event_expire_timers();
}

/* The tests' events: static, so that a test that failed half-way leaves
 * no queued timer in a dead stack frame; begin() cancels what it left. */
static struct tev tevs[2];

/* Each test's clock starts past the last one's (and the real one). */
static void begin(void)
{
	ngx_msec_t m = mono_ms();
	size_t i;

	for (i = 0; i < sizeof(tevs) / sizeof(tevs[0]); i++)
		if (tevs[i].ev.timer_set && tevs[i].ev.handler == on_timer)
			ngx_event_del_timer(&tevs[i].ev);

	t0 = (ngx_current_msec > m ? ngx_current_msec : m) + 100000;
	ngx_current_msec = t0;
	time_updates = 0;
}

static int setup(void **state)
{
	(void)state;
	ngx_current_msec = mono_ms();
	assert_int_equal(ngx_event_timer_init(NULL), NGX_OK);
	return 0;
}

/* --- the tests ---------------------------------------------------------------- */

static void test_timer_runs_in_its_window_once(void **state)
{
	struct tev *a = &tevs[0];

	(void)state;
	begin();
	tev_init(a, 0);
	ngx_event_add_timer(&a->ev, 1000);
	assert_true(a->ev.timer_set);
	assert_int_equal(a->ev.timer.key, t0 + 1000);
	/* the longest sleep: to the hard expiry, 1000 + 100 ms */
	assert_int_equal(ngx_event_find_timer(), 1100);
	run_at(999);
	assert_int_equal(a->runs, 0);
	run_at(1000);
	assert_int_equal(a->runs, 1);
	assert_false(a->ev.timer_set);
	run_at(1200);
	assert_int_equal(a->runs, 1);
	assert_int_equal(ngx_event_find_timer(), NGX_TIMER_INFINITE);
	assert_int_equal(time_updates, 0);
}

static void test_window_is_a_tenth_capped_at_the_lazy_delay(void **state)
{
	struct tev *a = &tevs[0];

	(void)state;
	begin();
	tev_init(a, 1);
	ngx_event_add_timer(&a->ev, 60000);
	assert_int_equal(ngx_event_find_timer(), 60000 + NGX_TIMER_LAZY_DELAY);
	ngx_event_del_timer(&a->ev);
	ngx_event_add_timer(&a->ev, 5);  /* 0.5 ms: rounded up */
	assert_int_equal(ngx_event_find_timer(), 6);
	ngx_event_del_timer(&a->ev);
	ngx_event_add_timer(&a->ev, 0);
	assert_int_equal(ngx_event_find_timer(), 0);
	run_at(0);
	assert_int_equal(a->runs, 1);
}

static void test_rearm_inside_the_window_keeps_the_timer(void **state)
{
	struct tev *a = &tevs[0];

	(void)state;
	begin();
	tev_init(a, 1);
	ngx_event_add_timer(&a->ev, 60000);              /* [60000, 60300] */
	ngx_current_msec = t0 + 200;
	ngx_event_add_timer(&a->ev, 60000);              /* new [60200, 60500]: kept */
	assert_int_equal(a->ev.timer.key, t0 + 60000);
	ngx_current_msec = t0 + 400;
	ngx_event_add_timer(&a->ev, 60000);              /* new [60400, 60700]: moved */
	assert_int_equal(a->ev.timer.key, t0 + 60400);
	ngx_event_add_timer(&a->ev, 1000);               /* earlier: moved */
	assert_int_equal(a->ev.timer.key, t0 + 1400);
	run_at(1399);
	assert_int_equal(a->runs, 0);
	run_at(1400);
	assert_int_equal(a->runs, 1);
}

/* nginx calls it per cycle; a second in one process keeps the base. */
static void test_second_init_keeps_the_timers(void **state)
{
	struct tev *a = &tevs[0];

	(void)state;
	begin();
	tev_init(a, 0);
	ngx_event_add_timer(&a->ev, 10);
	assert_int_equal(ngx_event_timer_init(NULL), NGX_OK);
	run_at(10);
	assert_int_equal(a->runs, 1);
	assert_int_equal(ngx_event_no_timers_left(), NGX_OK);
}

static void test_del_cancels(void **state)
{
	struct tev *a = &tevs[0];

	(void)state;
	begin();
	tev_init(a, 0);
	ngx_event_add_timer(&a->ev, 10);
	ngx_event_del_timer(&a->ev);
	assert_false(a->ev.timer_set);
	run_at(100);
	assert_int_equal(a->runs, 0);
	assert_int_equal(ngx_event_no_timers_left(), NGX_OK);
}

static void test_handler_sets_its_own_timer_again(void **state)
{
	struct tev *a = &tevs[0];

	(void)state;
	begin();
	tev_init(a, 0);
	a->again = 50;
	ngx_event_add_timer(&a->ev, 10);
	run_at(10);
	assert_int_equal(a->runs, 1);
	assert_true(a->ev.timer_set);                    /* set again, from its handler */
	run_at(59);
	assert_int_equal(a->runs, 1);
	run_at(65);
	assert_int_equal(a->runs, 2);
	assert_int_equal(a->ran_at, t0 + 65);
	assert_false(a->ev.timer_set);
}

/* W: [10000, 10300] set at 0; Z: [10090, 10100] set at 9990.  At 10050
 * Z, first by hard expiry, is not due: only the greedy walk runs W, and
 * only when no posted event waits. */
static void test_expiry_is_greedy_only_when_idle(void **state)
{
	struct tev *w = &tevs[0], *z = &tevs[1];
	ngx_queue_t posted;

	(void)state;
	begin();
	tev_init(w, 1);
	tev_init(z, 1);
	ngx_event_add_timer(&w->ev, 10000);
	ngx_current_msec = t0 + 9990;
	ngx_event_add_timer(&z->ev, 100);
	posted.prev = posted.next = &ngx_posted_events;
	ngx_posted_events.prev = ngx_posted_events.next = &posted;
	run_at(10050);
	ngx_posted_events.prev = ngx_posted_events.next = &ngx_posted_events;
	assert_int_equal(w->runs, 0);
	run_at(10051);
	assert_int_equal(w->runs, 1);
	assert_int_equal(z->runs, 0);
	run_at(10090);
	assert_int_equal(z->runs, 1);
}

static void test_shutdown_waits_for_non_cancelable_timers_only(void **state)
{
	struct tev *c = &tevs[0], *n = &tevs[1];

	(void)state;
	begin();
	tev_init(c, 1);
	tev_init(n, 0);
	assert_int_equal(ngx_event_no_timers_left(), NGX_OK);
	ngx_event_add_timer(&c->ev, 100);
	assert_int_equal(ngx_event_no_timers_left(), NGX_OK);
	ngx_event_add_timer(&n->ev, 200);
	assert_int_equal(ngx_event_no_timers_left(), NGX_AGAIN);
	ngx_event_add_timer(&n->ev, 5000);               /* a re-arm counts once */
	ngx_event_del_timer(&n->ev);
	assert_int_equal(ngx_event_no_timers_left(), NGX_OK);
	ngx_event_add_timer(&n->ev, 200);
	run_at(100);
	assert_int_equal(ngx_event_no_timers_left(), NGX_AGAIN);
	run_at(5000);                                   /* it ran */
	assert_int_equal(n->runs, 1);
	assert_int_equal(ngx_event_no_timers_left(), NGX_OK);
}

/* The hook: hrt's plan shortens nginx's timeout to the window's start;
 * timer_resolution (no NGX_UPDATE_TIME) and posted work leave it alone or
 * make it 0.  Real clock: the plan reads it. */
static void test_epoll_hook_sleeps_until_the_window(void **state)
{
	struct epoll_event evs[4];
	struct tev *a = &tevs[0];
	int ep = epoll_create1(EPOLL_CLOEXEC), n, efd;
	ngx_msec_t t;
	ngx_queue_t posted;

	(void)state;
	assert_true(ep >= 0);
	tev_init(a, 1);
	ngx_current_msec = mono_ms();
	ngx_event_add_timer(&a->ev, 20);                 /* [20, 22] ms from now */
	n = ngx_event_timer_epoll_wait(ep, evs, 4, ngx_event_find_timer(), NGX_UPDATE_TIME);
	assert_true(n >= 0);
	/* 0 only if the machine stalled past the window before planning */
	assert_true(last_timeout >= 0 && last_timeout <= 20);
	ngx_time_update();
	ngx_event_expire_timers();
	if (a->runs == 0) {                              /* the sleep ended early: a signal */
		ngx_current_msec = mono_ms() + 30;
		ngx_event_expire_timers();
	}
	assert_int_equal(a->runs, 1);

	n = ngx_event_timer_epoll_wait(ep, evs, 4, 3, 0);   /* timer_resolution */
	assert_int_equal(last_timeout, 3);

	/* I/O ended the sleep: the next one is nginx's own, unplanned, until a
	 * sleep ends with nothing to read. */
	ngx_current_msec = mono_ms();
	ngx_event_add_timer(&a->ev, 1000);
	efd = eventfd(1, EFD_CLOEXEC | EFD_NONBLOCK);
	assert_true(efd >= 0);
	assert_int_equal(epoll_ctl(ep, EPOLL_CTL_ADD, efd, &(struct epoll_event){ .events = EPOLLIN }), 0);
	t = ngx_event_find_timer();                     /* 1100: the hard expiry */
	assert_true(t > 1000);
	n = ngx_event_timer_epoll_wait(ep, evs, 4, t, NGX_UPDATE_TIME);
	assert_int_equal(n, 1);
	assert_true(last_timeout >= 0 && last_timeout < (int)t);       /* the plan's */
	n = ngx_event_timer_epoll_wait(ep, evs, 4, t, NGX_UPDATE_TIME);
	assert_int_equal(n, 1);
	assert_int_equal(last_timeout, (int)t);                        /* nginx's */
	ngx_hrt_rev.handler(&ngx_hrt_rev);      /* nginx's loop saw hrt's timerfd readable */
	n = ngx_event_timer_epoll_wait(ep, evs, 4, t, NGX_UPDATE_TIME);
	assert_true(last_timeout >= 0 && last_timeout < (int)t);       /* planned: it drains it */
	n = ngx_event_timer_epoll_wait(ep, evs, 4, t, NGX_UPDATE_TIME);
	assert_int_equal(last_timeout, (int)t);
	close(efd);
	n = ngx_event_timer_epoll_wait(ep, evs, 4, 0, NGX_UPDATE_TIME);
	assert_int_equal(n, 0);
	n = ngx_event_timer_epoll_wait(ep, evs, 4, t, NGX_UPDATE_TIME);
	assert_true(last_timeout >= 0 && last_timeout < (int)t);       /* planned again */
	ngx_event_del_timer(&a->ev);
	ngx_event_add_timer(&a->ev, 1000);
	posted.prev = posted.next = &ngx_posted_next_events;
	ngx_posted_next_events.prev = ngx_posted_next_events.next = &posted;
	n = ngx_event_timer_epoll_wait(ep, evs, 4, ngx_event_find_timer(), NGX_UPDATE_TIME);
	ngx_posted_next_events.prev = ngx_posted_next_events.next = &ngx_posted_next_events;
	assert_int_equal(last_timeout, 0);
	ngx_event_del_timer(&a->ev);
	close(ep);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_epoll_hook_sleeps_until_the_window),
		cmocka_unit_test(test_timer_runs_in_its_window_once),
		cmocka_unit_test(test_window_is_a_tenth_capped_at_the_lazy_delay),
		cmocka_unit_test(test_rearm_inside_the_window_keeps_the_timer),
		cmocka_unit_test(test_second_init_keeps_the_timers),
		cmocka_unit_test(test_del_cancels),
		cmocka_unit_test(test_handler_sets_its_own_timer_again),
		cmocka_unit_test(test_expiry_is_greedy_only_when_idle),
		cmocka_unit_test(test_shutdown_waits_for_non_cancelable_timers_only),
	};

	int failed = cmocka_run_group_tests(tests, setup, NULL);

	if (logged) {   /* nothing above should make the module log an error */
		print_message("the module logged %d errors\n", logged);
		return 1;
	}
	return failed;
}
