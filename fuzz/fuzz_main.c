/* SPDX-License-Identifier: MIT */
/*
 * fuzz_main.c - a plain main() for the libFuzzer harnesses, so `make test`
 * replays each corpus under gcc (and the sanitizers) without clang.
 * Arguments: files or directories of inputs.  An input that takes longer
 * than FUZZ_INPUT_SECONDS (libFuzzer's -timeout) fails the run by name.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#define FUZZ_INPUT_SECONDS 20           /* generous: sanitizers, a busy machine */

static const char *current;

static void on_alarm(int sig)
{
	static const char msg[] = "fuzz replay: timeout on input ";

	(void)sig;
	if (write(2, msg, sizeof(msg) - 1) < 0 || write(2, current, strlen(current)) < 0 ||
	    write(2, "\n", 1) < 0) {
		/* nothing more to say */
	}
	_exit(1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	if (!f) {
		perror(path);
		return 1;
	}
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc(n > 0 ? (size_t)n : 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		fprintf(stderr, "%s: read failed\n", path);
		fclose(f);
		free(buf);
		return 1;
	}
	fclose(f);
	current = path;
	alarm(FUZZ_INPUT_SECONDS);
	LLVMFuzzerTestOneInput(buf, (size_t)n);
	alarm(0);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	int files = 0, err = 0;

	signal(SIGALRM, on_alarm);

	for (int i = 1; i < argc; i++) {
		struct stat st;
		DIR *d;
		struct dirent *e;

		if (stat(argv[i], &st) < 0) {
			perror(argv[i]);
			return 1;
		}
		if (!S_ISDIR(st.st_mode)) {
			err |= run_file(argv[i]);
			files++;
			continue;
		}
		if (!(d = opendir(argv[i])))
			return 1;
		while ((e = readdir(d))) {
			char path[4096];

			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", argv[i], e->d_name);
			err |= run_file(path);
			files++;
		}
		closedir(d);
	}
	printf("%d inputs replayed\n", files);
	return err || files == 0;
}
