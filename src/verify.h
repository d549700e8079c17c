/* SPDX-License-Identifier: MIT */
/*
 * verify.h - the library's own invariant checks, built in by `make
 * VERIFY=1` (-DHRT_VERIFY; `make test VERIFY=1` runs every test so, as
 * CI's sanitizer run does) and compiled to nothing otherwise, so that a
 * release build never prints or aborts (hrt.h).  Two kinds, as the
 * kernel's lockdep_assert_held and libev's EV_FREQUENT_CHECK:
 *   base_assert_locked(b)  at every "lock held" precondition: this thread
 *                          holds b's lock (for an unlocked base: is the
 *                          one calling it, between its lock and unlock).
 *                          The devices' arm() (the loop's loop_arm, which
 *                          cannot see the base) is covered by device_arm's,
 *                          its one caller;
 *   verify_set(ts)         after every change of a timer set by the base
 *                          layer: hrt__tset_check finds nothing broken.
 *   verify_queued(ts)      when hrt_base_free refuses a base that holds
 *                          timers: the whole set, so that a timer freed
 *                          while queued (hrt.h: cancel before freeing) is
 *                          found before the program ends with it
 *                          queued - by the check, where free() wrote over
 *                          its first words, or by AddressSanitizer's
 *                          report of the check's read, in a SANITIZE=1
 *                          build.
 * A failure prints the file, line and broken rule to stderr and aborts.
 * verify_set checks the whole set while it holds at most 512 timers, and
 * beyond that once per that many changes (amortised O(1) per change), so
 * large tests stay linear.
 */
#ifndef HRT_VERIFY_H
#define HRT_VERIFY_H

#ifdef HRT_VERIFY
struct hrt_tset;
void hrt__verify_fail(const char *file, int line, const char *rule) __attribute__((noreturn));
const char *hrt__verify_set(const struct hrt_tset *ts);

/* An unlocked base has no lock to hold: its owner thread is the check. */
#define verify_took(b) do { \
	if (!(b)->unlocked) \
		__atomic_store_n(&(b)->verify_holder, hrt__thread_id_get(), __ATOMIC_RELAXED); \
} while (0)
#define verify_gives(b) do { \
	if (!(b)->unlocked) { \
		if (__atomic_load_n(&(b)->verify_holder, __ATOMIC_RELAXED) != hrt__thread_id_get()) \
			hrt__verify_fail(__FILE__, __LINE__, \
					 "base unlocked by a thread that does not hold it"); \
		__atomic_store_n(&(b)->verify_holder, 0, __ATOMIC_RELAXED); \
	} \
} while (0)
#define base_assert_locked(b) do { \
	if (((b)->unlocked ? (b)->owner \
			   : __atomic_load_n(&(b)->verify_holder, __ATOMIC_RELAXED)) != \
	    hrt__thread_id_get()) \
		hrt__verify_fail(__FILE__, __LINE__, "base lock not held by this thread"); \
} while (0)
#define verify_set(ts) do { \
	const char *verify_why_ = hrt__verify_set(ts); \
	if (verify_why_) \
		hrt__verify_fail(__FILE__, __LINE__, verify_why_); \
} while (0)
/* The whole set, now, whatever its size: hrt_base_free refusing a base
 * that still holds timers, the last look at them a program may give. */
void hrt__verify_queued(const char *file, int line, const struct hrt_tset *ts);
#define verify_queued(ts)       hrt__verify_queued(__FILE__, __LINE__, ts)
#else
#define verify_took(b)          ((void)0)
#define verify_gives(b)         ((void)0)
#define base_assert_locked(b)   ((void)0)
#define verify_set(ts)          ((void)0)
#define verify_queued(ts)       ((void)0)
#endif

#endif /* HRT_VERIFY_H */
