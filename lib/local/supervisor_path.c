/*
 * Where the engine finds the program tfjob-supervise (docs/local.md, "How a replica is
 * started"): TFJOB_SUPERVISE when set (and nothing else then), else next to the loaded libtfjob
 * (the build tree: the tools, the tests and the bindings run from it), else the install's libexec
 * directory relative to the library (an install moved as a whole, or under DESTDIR), else the
 * libexec directory it was built for.
 * SPDX-License-Identifier: Apache-2.0
 */
#define _GNU_SOURCE /* dladdr, secure_getenv */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "local/internal.h"

/* Set by meson (lib/meson.build): the installed program, and its path from the library's
 * directory; "" when unknown. */
#ifndef TFJOB_SUPERVISE_INSTALLED
#define TFJOB_SUPERVISE_INSTALLED ""
#endif
#ifndef TFJOB_SUPERVISE_FROM_LIBDIR
#define TFJOB_SUPERVISE_FROM_LIBDIR ""
#endif

static bool runnable(const char *path)
{
	struct stat st;
	return path && path[0] && stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* The directory of the file this code was loaded from (libtfjob.so, or a program it is linked
 * into), or NULL. */
static char *own_dir(void)
{
	static const char anchor = 0;
	Dl_info info;
	if (!dladdr(&anchor, &info) || !info.dli_fname || !strchr(info.dli_fname, '/'))
		return NULL;
	char *path = realpath(info.dli_fname, NULL);
	if (path)
		*strrchr(path, '/') = '\0';
	return path;
}

char *tfjob__local_supervise_path(char **looked)
{
	*looked = NULL;
	const char *env = secure_getenv("TFJOB_SUPERVISE");
	if (env && env[0]) {
		if (runnable(env))
			return tfjob__strdup(env);
		*looked = tfjob__strdup_printf("TFJOB_SUPERVISE=%s", env);
		return NULL;
	}
	char *dir = own_dir();
	char *next_to = dir ? tfjob__strdup_printf("%s/%s", dir, TFJOB__SUPERVISE_NAME) : NULL;
	char *relative = dir && TFJOB_SUPERVISE_FROM_LIBDIR[0] ? tfjob__strdup_printf("%s/%s", dir, TFJOB_SUPERVISE_FROM_LIBDIR)
	                                                       : NULL;
	free(dir);
	const char *candidates[] = { next_to, relative, TFJOB_SUPERVISE_INSTALLED };
	char *found = NULL;
	for (size_t i = 0; i < sizeof candidates / sizeof candidates[0] && !found; i++)
		if (runnable(candidates[i]))
			found = realpath(candidates[i], NULL);
	if (!found)
		*looked = tfjob__strdup_printf("%s%s%s%s%s", next_to ? next_to : "", next_to ? ", " : "",
		                               relative ? relative : "", relative ? ", " : "", TFJOB_SUPERVISE_INSTALLED);
	free(next_to);
	free(relative);
	return found;
}
