/* SPDX-License-Identifier: MIT */
/*
 * cmds.h - the subcommands of the hrt tool, each in tools/cmd/cmd_NAME.c
 * (the rest of tools/ is in a folder per concept: trace, replay, live,
 * apply, sim, demo, common).  Each returns the process exit
 * status: 0 success, 1 runtime failure, 2 bad input or usage.  main()
 * (tools/cmd/hrt.c) then checks stdout with tool_close_stdout() (outfile.h);
 * -o files go through outfile_open()/outfile_commit().
 */
#ifndef HRT_TOOLS_CMDS_H
#define HRT_TOOLS_CMDS_H

int hrt_cmd_demo(int argc, char **argv);     /* tools/cmd/cmd_demo.c */
int hrt_cmd_record(int argc, char **argv);   /* tools/cmd/cmd_record.c */
int hrt_cmd_replay(int argc, char **argv);   /* tools/cmd/cmd_replay.c */
int hrt_cmd_convert(int argc, char **argv);  /* tools/cmd/cmd_convert.c */
int hrt_cmd_sim(int argc, char **argv);      /* tools/cmd/cmd_sim.c */
int hrt_cmd_top(int argc, char **argv);      /* tools/cmd/cmd_top.c */
int hrt_cmd_run(int argc, char **argv);      /* tools/cmd/cmd_run.c */
int hrt_cmd_slack(int argc, char **argv);    /* tools/cmd/cmd_slack.c */

#endif
