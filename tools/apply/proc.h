/* SPDX-License-Identifier: MIT */
/*
 * proc.h - the processes `hrt slack` acts on, read from /proc (internal to
 * the hrt tool): a PID or a name resolved to processes, their threads,
 * scheduling policy and timer slack.
 *
 * Names match as `pgrep -x` does: a process whose comm (/proc/PID/comm,
 * the kernel's 15-byte name) equals NAME; a NAME longer than 15 bytes
 * matches on its first 15.  Only processes (thread-group leaders) match,
 * never this process.
 */
#ifndef HRT_TOOLS_PROC_H
#define HRT_TOOLS_PROC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PROC_COMM_MAX 16        /* the kernel's TASK_COMM_LEN */

/* The comm of task PID (of process TGID, or TGID 0: a process) in buf, the
 * trailing newline removed.  0 or -errno (-ENOENT: no such task). */
int proc_comm(pid_t tgid, pid_t pid, char *buf, size_t len);
/* The thread-group id of task PID: PID itself for a process.  -errno. */
pid_t proc_tgid(pid_t pid);
/* Up to max processes whose comm is NAME, in pid order: the number found
 * (may exceed max), or -errno. */
long proc_find_name(const char *name, pid_t *out, size_t max);
/* The threads of process PID other than its main thread (malloc'ed, in tid
 * order; free(*out)).  0 or -errno. */
int proc_threads(pid_t pid, pid_t **out, size_t *n);
/* 1 if task PID is a kernel thread (PF_KTHREAD in /proc/PID/stat), 0 if
 * not, or -errno. */
int proc_is_kthread(pid_t pid);
/* The scheduling policy of task PID (SCHED_*), or -errno. */
int proc_policy(pid_t pid);
/* "SCHED_FIFO" ...; NULL for a policy that is not real-time. */
const char *proc_rt_policy_name(int policy);
/* /proc/PID/timerslack_ns: the main thread's slack.  0 or -errno. */
int proc_get_slack(pid_t pid, uint64_t *ns);
/* Writes it (0: the task's default).  0 or -errno. */
int proc_set_slack(pid_t pid, uint64_t ns);
/* Whether this process may change another's slack: CAP_SYS_NICE in its
 * effective set (root normally has it). */
int proc_can_set_slack(void);

#endif
