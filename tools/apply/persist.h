/* SPDX-License-Identifier: MIT */
/*
 * persist.h - what `hrt slack` keeps beyond the running process (internal
 * to the hrt tool): the slack of a systemd service persisted as a drop-in,
 * and a note of each slack applied, for `hrt slack --list`.
 *
 * Persisted: ROOT/etc/systemd/system/UNIT.d/hrt-slack.conf, whose first
 * line is PERSIST_MARK, then "[Service]" and "TimerSlackNSec=NS" - the
 * conventional place of an administrator's change to a unit, read by
 * systemd at its next daemon-reload and applied at the unit's next start
 * (every process of the service inherits it).  Only a file with that first
 * line is replaced or removed: a file hrt did not write is refused, never
 * touched.  Every path below ROOT is opened without following a symbolic
 * link (a link is refused: it would lead the write somewhere else), and the
 * file is written to a temporary beside it, synced and renamed over it, so
 * it is whole or absent.  systemd is not asked to reload: the command to
 * run is printed (`systemctl daemon-reload`), so nothing outside the file
 * changes behind the administrator's back.
 *
 * Applied: ROOT/run/hrt/slack-applied, a line per change ("PID START OLD
 * NEW COMM", START the process's start time in clock ticks since boot, so
 * a reused PID is not mistaken for it); /run is emptied at boot, as the
 * slack set on running processes is gone then.
 *
 * ROOT is "/" normally; `--root DIR` puts both under DIR (tests).
 */
#ifndef HRT_TOOLS_PERSIST_H
#define HRT_TOOLS_PERSIST_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define PERSIST_MARK "# Written by hrt slack --persist; hrt slack --unpersist UNIT removes it."
#define PERSIST_DIR "etc/systemd/system"
#define PERSIST_FILE "hrt-slack.conf"
#define APPLIED_FILE "run/hrt/slack-applied"

/* What a process's cgroup says of its unit (/proc/PID/cgroup). */
enum unit_kind {
	UNIT_SERVICE,           /* a system service: unit is NAME.service */
	UNIT_USER_SERVICE,      /* a service of a user's manager (user@UID) */
	UNIT_SCOPE,             /* a scope (a login session, a transient run) */
	UNIT_NONE,              /* the root cgroup, a slice, or no systemd */
	UNIT_FOREIGN,           /* a cgroup not below this system's slices (a
				 * container's: its units are not the host's) */
};
/* The unit of the cgroup line(s) TEXT (cgroup v2 "0::PATH", or v1's
 * "N:name=systemd:PATH"): its kind and its name in unit[len] (for
 * UNIT_NONE and UNIT_FOREIGN, the cgroup path).  0, or -1 when TEXT holds no cgroup. */
int persist_unit_of_cgroup(const char *text, enum unit_kind *kind, char *unit, size_t len);
/* The same for process PID.  0 or -errno. */
int persist_unit_of_pid(pid_t pid, enum unit_kind *kind, char *unit, size_t len);
/* A file name's longest (NAME_MAX): UNIT.d must be one, uncut. */
#define PERSIST_NAME_MAX 255
/* Whether NAME is a service name hrt writes for: 0 for NAME.service of
 * [A-Za-z0-9:_.@-] characters, no leading '.'; -EINVAL if it is not one,
 * -ENAMETOOLONG if UNIT.d would be longer than a file name may be (253
 * characters at most, where systemd takes 255). */
int persist_unit_name_ok(const char *name);

/* Writes UNIT's drop-in under ROOT with the slack NS.  0, or -1 after a
 * message on stderr ("hrt slack: PATH: what"), nothing changed; *path gets
 * the file's path as written (root included). */
int persist_write(const char *root, const char *unit, uint64_t ns, char *path, size_t len);
/* Removes UNIT's drop-in under ROOT, and its directory if that is left
 * empty.  0, 1 when there is none, or -1 after a message (not hrt's, a
 * symbolic link, an error), nothing changed. */
int persist_remove(const char *root, const char *unit, char *path, size_t len);
/* Lists the drop-ins hrt wrote under ROOT to f: "UNIT NS PATH" lines
 * (text), their number, or -1 after a message. */
int persist_list(const char *root, FILE *f);

/* Notes that process PID (COMM) went from OLD to NEW ns (NEW 0: --reset).
 * 0, or -errno (the caller warns: the slack is set by then). */
int applied_note(const char *root, pid_t pid, const char *comm, uint64_t old, uint64_t new_ns);
/* Lists the processes still running whose last note set a slack, and
 * their slack now.  The number listed, or -errno. */
int applied_list(const char *root, FILE *f);

#endif
