/* SPDX-License-Identifier: MIT */
/*
 * sim_text.c - the text of 'hrt sim': the table (utilisation, wake-ups and
 * migrations per policy, the idle/off ratios) and the CSV.
 */
#include <stdio.h>

#include "sim.h"

const char *const sim_policy_name[3] = { "off", "idle", "always" };

void sim_slack_str(const struct sim_config *c, char *buf, size_t n, const char *unit)
{
	size_t len = 0;

	buf[0] = 0;
	for (int i = 0; i < c->nslack && len + 24 < n; i++)
		len += (size_t)snprintf(buf + len, n - len, "%s%g", i ? "," : "",
					(double)c->slack[i] / 1000);
	snprintf(buf + len, n - len, " %s", unit);
}

void sim_print_table(const struct sim_config *c, const struct sim_point *p, int n)
{
	char sl[200];

	sim_slack_str(c, sl, sizeof(sl), "us");
	printf("hrt sim: %d CPUs, %d threads, slack %s, period %.1f us, "
	       "%.3f s per point, seed %llu\n\n", c->cpus, c->threads, sl,
	       (double)c->period / 1000, (double)c->duration / 1e9, (unsigned long long)c->seed);
	printf("       util %%             wake-ups                  migrations"
	       "          idle/off\n");
	printf("busy%%  off  idle always   off    idle   always     off   idle always"
	       "   migr  wake\n");
	for (int i = 0; i < n; i++) {
		const struct sim_result *r = p[i].r;

		printf("%4d  %4.1f %4.1f %5.1f  %6llu %6llu %6llu  %6llu %6llu %6llu  %5.3f %5.3f\n",
		       p[i].load, 100 * r[0].util, 100 * r[1].util, 100 * r[2].util,
		       (unsigned long long)r[0].wakeups, (unsigned long long)r[1].wakeups,
		       (unsigned long long)r[2].wakeups, (unsigned long long)r[0].migrations,
		       (unsigned long long)r[1].migrations, (unsigned long long)r[2].migrations,
		       sim_ratio(r[1].migrations, r[0].migrations), sim_ratio(r[1].wakeups, r[0].wakeups));
	}
}

void sim_print_csv(const struct sim_point *p, int n)
{
	printf("busy_target,policy,util,wakeups,migrations,wake_migrations,steals,waits,"
	       "timer_runs,expired_greedy,greedy_walks,early,late,mean_wait_us\n");
	for (int i = 0; i < n; i++)
		for (int k = 0; k < 3; k++) {
			const struct sim_result *r = &p[i].r[k];

			printf("%d,%s,%.4f,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%.3f\n",
			       p[i].load, sim_policy_name[k], r->util,
			       (unsigned long long)r->wakeups, (unsigned long long)r->migrations,
			       (unsigned long long)r->wake_migrations, (unsigned long long)r->steals,
			       (unsigned long long)r->waits, (unsigned long long)r->timer_runs,
			       (unsigned long long)r->expired_greedy,
			       (unsigned long long)r->greedy_walks, (unsigned long long)r->early,
			       (unsigned long long)r->late, r->mean_wait_us);
		}
}
