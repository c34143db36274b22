/* SPDX-License-Identifier: MIT */
/*
 * Test helpers shared by the tests that drive the loopback LLM stub
 * (build/tests/llm_stub): start it and read the port it prints, stop it,
 * read a whole file, and read its JSONL request log. Include after
 * <cmocka.h>; every failure is a cmocka assertion.
 */
#ifndef STUB_PROC_H
#define STUB_PROC_H

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "buf.h"

/* The build folder: $PROXIMA_BUILD (set by tests/run.sh), else "build". */
static inline const char *stub_build_dir(void)
{
	const char *b = getenv("PROXIMA_BUILD");

	return b && *b ? b : "build";
}

/*
 * Starts the stub with the NULL-terminated arguments `args` (after the
 * program name) and returns its pid; *port is the port it listens on.
 */
static inline pid_t stub_proc_start(const char *const *args, int *port)
{
	char bin[512], line[64];
	int fds[2];
	pid_t pid;
	FILE *f;

	snprintf(bin, sizeof(bin), "%s/tests/llm_stub", stub_build_dir());
	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		const char *argv[32];
		int n = 0;

		/* a crashed test must not leave its stub behind */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		argv[n++] = bin;
		while (*args && n < 31)
			argv[n++] = *args++;
		argv[n] = NULL;
		execv(bin, (char *const *)(uintptr_t)argv);
		_exit(127);
	}
	close(fds[1]);
	f = fdopen(fds[0], "r");
	assert_non_null(f);
	assert_non_null(fgets(line, sizeof(line), f));
	fclose(f);
	assert_int_equal(sscanf(line, "port %d", port), 1);
	return pid;
}

/* Stops the stub (SIGTERM, then waits) and clears *pid. */
static inline void stub_proc_stop(pid_t *pid)
{
	int st;

	if (*pid > 0) {
		kill(*pid, SIGTERM);
		waitpid(*pid, &st, 0);
		*pid = 0;
	}
}

/* The whole file (caller frees), or NULL when it cannot be opened. */
static inline char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	struct buf b;
	char tmp[4096];
	size_t n;

	if (!f)
		return NULL;
	buf_init(&b, (size_t)64 << 20);
	for (;;) {
		n = fread(tmp, 1, sizeof(tmp), f);
		if (!n)
			break;
		assert_int_equal(buf_add(&b, tmp, n), 0);
	}
	fclose(f);
	return buf_detach(&b);
}

/*
 * The stub's JSONL request log as a JSON array, one element per request.
 * A missing file is an empty array unless must_exist is set.
 */
static inline cJSON *stub_proc_log(const char *path, int must_exist)
{
	char *text = slurp(path), *line, *next;
	cJSON *arr = cJSON_CreateArray();

	if (must_exist)
		assert_non_null(text);
	for (line = text; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (*line) {
			cJSON *j = cJSON_Parse(line);

			assert_non_null(j);
			cJSON_AddItemToArray(arr, j);
		}
	}
	free(text);
	return arr;
}

#endif /* STUB_PROC_H */
