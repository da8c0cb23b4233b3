/*
 * Exec credential plugins (client.authentication.k8s.io/v1 and v1beta1): run the command with
 * its arguments and extra environment (no shell, our own environment untouched), pass
 * KUBERNETES_EXEC_INFO, read an ExecCredential from its standard output.
 * SPDX-License-Identifier: Apache-2.0
 */
#define _GNU_SOURCE /* pipe2 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "transport/kube_internal.h"

extern char **environ;

/* Largest ExecCredential accepted from a plugin's standard output. */
#define MAX_OUTPUT (1u << 20)

void tfjob__exec_result_clear(struct tfjob__exec_result *r)
{
	if (r->token) {
		memset(r->token, 0, strlen(r->token));
		free(r->token);
	}
	free(r->cert_data);
	if (r->key_data) {
		memset(r->key_data, 0, r->key_len);
		free(r->key_data);
	}
	memset(r, 0, sizeof(*r));
}

/* KUBERNETES_EXEC_INFO: the ExecCredential the plugin receives (spec.cluster when asked for). */
static char *exec_info(const struct tfjob__exec_config *exec, const struct tfjob__kube_config *cluster)
{
	json_t *spec = json_pack("{s:b}", "interactive", 0);
	if (spec && exec->provide_cluster_info && cluster) {
		json_t *c = json_pack("{s:s}", "server", cluster->server ? cluster->server : "");
		if (c && cluster->tls_server_name)
			json_object_set_new(c, "tls-server-name", json_string(cluster->tls_server_name));
		if (c && cluster->insecure)
			json_object_set_new(c, "insecure-skip-tls-verify", json_true());
		if (c && cluster->proxy_url)
			json_object_set_new(c, "proxy-url", json_string(cluster->proxy_url));
		if (c && cluster->ca_data) {
			char *b64 = tfjob__base64_encode(cluster->ca_data, cluster->ca_len);
			if (b64)
				json_object_set_new(c, "certificate-authority-data", json_string(b64));
			free(b64);
		}
		if (c)
			json_object_set_new(spec, "cluster", c);
	}
	json_t *cred = spec ? json_pack("{s:s, s:s, s:o}", "apiVersion", exec->api_version, "kind", "ExecCredential",
	                                "spec", spec) : NULL;
	char *text = cred ? json_dumps(cred, JSON_COMPACT) : NULL;
	json_decref(cred);
	return text;
}

/* The child's environment: ours, minus names the plugin config overrides, plus those and the info. */
static char **child_env(const struct tfjob__exec_config *exec, const char *info)
{
	size_t n = 0;
	while (environ && environ[n])
		n++;
	char **env = calloc(n + exec->nenv + 2, sizeof(char *));
	if (!env)
		return NULL;
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		const char *eq = strchr(environ[i], '=');
		size_t len = eq ? (size_t)(eq - environ[i]) : strlen(environ[i]);
		int overridden = !strncmp(environ[i], "KUBERNETES_EXEC_INFO", len) && len == 20;
		for (size_t j = 0; j < exec->nenv && !overridden; j++)
			overridden = !strncmp(exec->env[j], environ[i], len) && exec->env[j][len] == '=';
		if (!overridden)
			env[k++] = environ[i];
	}
	for (size_t j = 0; j < exec->nenv; j++)
		env[k++] = exec->env[j];
	env[k++] = (char *)info;
	env[k] = NULL;
	return env;
}

/* Read everything from fd: NULL when out of memory, or (*too_large set) beyond MAX_OUTPUT bytes. */
static char *read_all(int fd, int *too_large)
{
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	*too_large = 0;
	while (buf) {
		if (n + 1 >= cap) {
			if (n > MAX_OUTPUT) {
				/* Credentials may be in there. */
				memset(buf, 0, n);
				free(buf);
				*too_large = 1;
				return NULL;
			}
			size_t want = cap * 2 > MAX_OUTPUT + 2 ? MAX_OUTPUT + 2 : cap * 2;
			char *grown = realloc(buf, want);
			if (!grown) {
				free(buf);
				return NULL;
			}
			buf = grown;
			cap = want;
		}
		ssize_t got = read(fd, buf + n, cap - n - 1);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		n += (size_t)got;
	}
	if (buf)
		buf[n] = '\0';
	return buf;
}

static int spawn_plugin(pid_t *pid, int *out_fd, const struct tfjob__exec_config *exec, char **env, tfjob_error **err)
{
	int fds[2];
	/* Close-on-exec from the start, so that no process another thread starts meanwhile holds the
	 * write end (the read below would then wait for its end); dup2 onto the plugin's stdout clears
	 * the flag there. */
	if (pipe2(fds, O_CLOEXEC))
		return tfjob__fail(err, TFJOB_EIO, "exec plugin: pipe: %s", strerror(errno));
	char **argv = calloc(exec->nargs + 2, sizeof(char *));
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
	posix_spawn_file_actions_addclose(&fa, fds[0]);
	posix_spawn_file_actions_addclose(&fa, fds[1]);
	int rc = ENOMEM;
	if (argv) {
		argv[0] = exec->command;
		for (size_t i = 0; i < exec->nargs; i++)
			argv[i + 1] = exec->args[i];
		rc = posix_spawnp(pid, exec->command, &fa, NULL, argv, env);
	}
	posix_spawn_file_actions_destroy(&fa);
	free(argv);
	close(fds[1]);
	if (rc) {
		close(fds[0]);
		return tfjob__fail(err, TFJOB_EIO, "exec plugin: cannot run '%s': %s%s%s", exec->command, strerror(rc),
		                   exec->install_hint ? "\n" : "", exec->install_hint ? exec->install_hint : "");
	}
	*out_fd = fds[0];
	return 0;
}

static int dup_field(char **out, size_t *len, const json_t *status, const char *key)
{
	const char *v = json_string_value(json_object_get(status, key));
	if (!v || !v[0])
		return 0;
	*out = tfjob__strdup(v);
	if (len)
		*len = *out ? strlen(v) : 0;
	return *out ? 0 : TFJOB_ENOMEM;
}

static int parse_credential(struct tfjob__exec_result *out, const char *text, const struct tfjob__exec_config *exec,
                            tfjob_error **err)
{
	json_t *cred = json_loads(text, 0, NULL);
	const char *kind = json_string_value(json_object_get(cred, "kind"));
	const char *av = json_string_value(json_object_get(cred, "apiVersion"));
	int rc = 0;
	if (!json_is_object(cred) || !kind || strcmp(kind, "ExecCredential"))
		rc = tfjob__fail(err, TFJOB_ESCHEMA, "exec plugin '%s': the output is not an ExecCredential", exec->command);
	else if (!av || strcmp(av, exec->api_version))
		rc = tfjob__fail(err, TFJOB_ESCHEMA, "exec plugin '%s': apiVersion '%s' does not match the configured '%s'",
		                 exec->command, av ? av : "", exec->api_version);
	const json_t *status = json_object_get(cred, "status");
	if (!rc && (dup_field(&out->token, NULL, status, "token") ||
	            dup_field(&out->cert_data, &out->cert_len, status, "clientCertificateData") ||
	            dup_field(&out->key_data, &out->key_len, status, "clientKeyData")))
		rc = tfjob__oom(err);
	if (!rc && !out->token && !(out->cert_data && out->key_data))
		rc = tfjob__fail(err, TFJOB_ESCHEMA, "exec plugin '%s': status has neither a token nor a client "
		                 "certificate and key", exec->command);
	const char *exp = json_string_value(json_object_get(status, "expirationTimestamp"));
	if (!rc && exp && tfjob_time_parse(&out->expiry, exp) != 0)
		rc = tfjob__fail(err, TFJOB_ESCHEMA, "exec plugin '%s': invalid expirationTimestamp", exec->command);
	json_decref(cred);
	if (rc)
		tfjob__exec_result_clear(out);
	return rc;
}

int tfjob__exec_credential_run(struct tfjob__exec_result *out, const struct tfjob__exec_config *exec,
                               const struct tfjob__kube_config *cluster, tfjob_error **err)
{
	memset(out, 0, sizeof(*out));
	char *info_json = exec_info(exec, cluster);
	char *info = info_json ? tfjob__strdup_printf("KUBERNETES_EXEC_INFO=%s", info_json) : NULL;
	free(info_json);
	char **env = info ? child_env(exec, info) : NULL;
	if (!env) {
		free(info);
		return tfjob__oom(err);
	}
	pid_t pid;
	int fd = -1;
	int rc = spawn_plugin(&pid, &fd, exec, env, err);
	free(env);
	free(info);
	if (rc)
		return rc;
	int too_large = 0;
	char *output = read_all(fd, &too_large);
	close(fd);
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	/* Before the exit status: a plugin cut off by the closed pipe dies of SIGPIPE. */
	if (too_large)
		return tfjob__fail(err, TFJOB_ELIMIT, "exec plugin '%s': its output is larger than the limit of %u bytes",
		                   exec->command, (unsigned int)MAX_OUTPUT);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		free(output);
		int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
		return tfjob__fail(err, TFJOB_EIO, "exec plugin '%s' failed with exit code %d%s%s", exec->command, code,
		                   code == 127 && exec->install_hint ? "\n" : "",
		                   code == 127 && exec->install_hint ? exec->install_hint : "");
	}
	if (!output)
		return tfjob__fail(err, TFJOB_EIO, "exec plugin '%s': cannot read its output", exec->command);
	rc = parse_credential(out, output, exec, err);
	memset(output, 0, strlen(output));
	free(output);
	return rc;
}
