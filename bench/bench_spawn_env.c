/*
 * bench_spawn_env: what an environment of S bytes costs a posix_spawn() + exec, apart from the
 * local runner. Every replica of a local run gets the whole TF_CONFIG (its cluster lists all n
 * replicas: about 18 bytes per replica) in its environment, and the kernel copies the
 * environment at each exec: that O(n) per replica is inherent. This measures it alone: K times,
 * posix_spawn() /bin/true with one variable of S bytes (plus this process's environment), and
 * wait for it. Per spawn it prints the CPU time of this thread (the caller, as the run's thread
 * is measured), of the children (the exec and /bin/true itself, whose loader reads the
 * environment), and the wall time.
 * Usage: bench_spawn_env [-sizes 100,2000,6000,18000,30000] [-k 1000]
 * SPDX-License-Identifier: Apache-2.0
 */
#define _GNU_SOURCE
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

#include "bench_time.h"

extern char **environ;

static double wall_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static double children_us(void)
{
	struct rusage ru;
	getrusage(RUSAGE_CHILDREN, &ru);
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 + (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

/* environ + BENCH_ENV=<size bytes of 'x'> (*var: that entry, to free), or NULL. */
static char **env_of(size_t size, char **var_out)
{
	size_t n = 0;
	while (environ[n])
		n++;
	char **env = calloc(n + 2, sizeof *env);
	char *var = malloc(size + 10);
	if (!env || !var)
		return NULL;
	memcpy(var, "BENCH_ENV=", 10);
	memset(var + 10, 'x', size);
	var[10 + size - 1] = '\0';
	memcpy(env, environ, n * sizeof *env);
	env[n] = var;
	*var_out = var;
	return env;
}

static int one_size(size_t size, int k)
{
	char *var = NULL;
	char **env = env_of(size < 1 ? 1 : size, &var);
	if (!env)
		return 1;
	char *argv[] = { "/bin/true", NULL };
	double cpu0 = now_ns(), kids0 = children_us(), wall0 = wall_us();
	for (int i = 0; i < k; i++) {
		pid_t pid;
		int status;
		if (posix_spawn(&pid, argv[0], NULL, NULL, argv, env) != 0 || waitpid(pid, &status, 0) != pid) {
			perror("spawn");
			free(var);
			free(env);
			return 1;
		}
	}
	printf("%8zu %12.1f %12.1f %12.1f\n", size, (now_ns() - cpu0) / 1e3 / k, (children_us() - kids0) / k,
	       (wall_us() - wall0) / k);
	free(var);
	free(env);
	return 0;
}

int main(int argc, char **argv)
{
	const char *sizes = "100,2000,6000,18000,30000";
	int k = 1000;
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "-sizes"))
			sizes = argv[i + 1];
		else if (!strcmp(argv[i], "-k"))
			k = atoi(argv[i + 1]);
	}
	printf("posix_spawn(/bin/true) + waitpid with one variable of S bytes, %d times; per spawn:\n", k);
	printf("%8s %12s %12s %12s\n", "S bytes", "caller us", "children us", "wall us");
	for (const char *p = sizes; *p;) {
		if (one_size((size_t)strtoull(p, NULL, 10), k))
			return 1;
		p = strchr(p, ',');
		if (!p)
			break;
		p++;
	}
	return 0;
}
