/*
 * Driving the fault server from C.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "fault.h"

#include <check.h>
#include <curl/curl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

void fault_start(struct fault_server *fs, const char *dir, const char *cert, const char *key, const char *client_ca)
{
	const char *script = getenv("TFJOB_FAULT_SERVER");
	ck_assert_msg(script != NULL, "TFJOB_FAULT_SERVER is not set");
	char port_file[1024];
	snprintf(port_file, sizeof(port_file), "%s/port-%d-%d", dir, (int)getpid(), cert ? 1 : 0);
	unlink(port_file);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		const char *argv[12] = { "python3", script, "--port-file", port_file };
		int n = 4;
		if (cert) {
			argv[n++] = "--cert";
			argv[n++] = cert;
			argv[n++] = "--key";
			argv[n++] = key;
		}
		if (client_ca) {
			argv[n++] = "--client-ca";
			argv[n++] = client_ca;
		}
		argv[n] = NULL;
		execvp("python3", (char *const *)argv);
		_exit(127);
	}
	fs->pid = pid;
	fs->tls = cert != NULL;
	for (int i = 0; i < 500; i++) {
		FILE *f = fopen(port_file, "r");
		if (f) {
			int ok = fscanf(f, "%d", &fs->port) == 1;
			fclose(f);
			if (ok)
				break;
		}
		usleep(20000);
	}
	ck_assert_msg(fs->port > 0, "the fault server did not start");
	snprintf(fs->url, sizeof(fs->url), "%s://127.0.0.1:%d", cert ? "https" : "http", fs->port);
}

void fault_stop(struct fault_server *fs)
{
	if (fs->pid > 0) {
		kill(fs->pid, SIGTERM);
		waitpid(fs->pid, NULL, 0);
	}
	fs->pid = 0;
}

struct buf {
	char *data;
	size_t len;
};

static size_t collect(char *d, size_t s, size_t n, void *arg)
{
	struct buf *b = arg;
	b->data = realloc(b->data, b->len + s * n + 1);
	memcpy(b->data + b->len, d, s * n);
	b->len += s * n;
	b->data[b->len] = '\0';
	return s * n;
}

static char *control(struct fault_server *fs, const char *method, const char *path, const char *body)
{
	CURL *c = curl_easy_init();
	char url[256];
	snprintf(url, sizeof(url), "%s%s", fs->url, path);
	struct buf b = { NULL, 0 };
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	if (body)
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
	CURLcode rc = curl_easy_perform(c);
	curl_easy_cleanup(c);
	ck_assert_msg(rc == CURLE_OK, "control %s: %s", path, curl_easy_strerror(rc));
	return b.data;
}

void fault_rules(struct fault_server *fs, const char *rules_json)
{
	json_error_t e;
	json_t *check = json_loads(rules_json, 0, &e);
	ck_assert_msg(check != NULL, "bad rules JSON: %s (%s)", e.text, rules_json);
	json_decref(check);
	free(control(fs, "POST", "/_control/rules", rules_json));
}

void fault_reset(struct fault_server *fs) { free(control(fs, "POST", "/_control/reset", "{}")); }

json_t *fault_log(struct fault_server *fs)
{
	char *text = control(fs, "GET", "/_control/log", NULL);
	json_t *log = json_loads(text, 0, NULL);
	free(text);
	ck_assert_ptr_nonnull(log);
	return log;
}

char *make_temp_dir(void)
{
	char tmpl[] = "/tmp/tfjob-transport-XXXXXX";
	char *d = mkdtemp(tmpl);
	ck_assert_ptr_nonnull(d);
	return strdup(d);
}

void rm_rf(const char *dir)
{
	char cmd[1200];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
}

void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	ck_assert_msg(f != NULL, "cannot write %s", path);
	fputs(text, f);
	fclose(f);
}
