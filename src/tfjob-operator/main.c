/*
 * tfjob-operator: reconciles TFJobs on a Kubernetes cluster with libtfjob's controller.
 * Flags follow training-operator's where they apply; /healthz, /readyz and Prometheus /metrics
 * are served by a small HTTP server; SIGTERM/SIGINT stop gracefully (in-flight reconciles end,
 * the Lease is released).
 * SPDX-License-Identifier: Apache-2.0
 */
#include <errno.h>
#include <gnutls/gnutls.h>
#include <jansson.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <time.h>

#include <tfjob/tfjob.h>

#include "certmgr.h"
#include "http.h"
#include "tlsstore.h"
#include "webhook.h"

static const char usage[] =
	"Usage: tfjob-operator [flags]\n"
	"Reconciles kubeflow.org/v1 TFJobs: creates their pods and services, tracks their status.\n\n"
	"  --namespace NS                 watch only NS (default: $KUBEFLOW_NAMESPACE, else all namespaces)\n"
	"  --kubeconfig FILE              kubeconfig (default: $KUBECONFIG, ~/.kube/config, in-cluster)\n"
	"  --kube-api-qps Q               client rate limit, requests per second (default 20)\n"
	"  --kube-api-burst N             client burst (default 30)\n"
	"  --controller-threads N         reconcile workers (default 1; also --threadiness, --workers)\n"
	"  --status-writers N             status writes in flight at once, off the workers (default 4;\n"
	"                                 0 = each worker writes its statuses itself)\n"
	"  --leader-elect, --enable-leader-election\n"
	"                                 reconcile only while holding a coordination.k8s.io Lease\n"
	"  --leader-election-id ID        Lease name (default 1ca428e5.training-operator.kubeflow.org)\n"
	"  --leader-election-namespace NS Lease namespace (default: --namespace, else the client's)\n"
	"  --gang-scheduler-name NAME     volcano, or the scheduler-plugins scheduler's name: any other\n"
	"                                 name is scheduler-plugins (\"scheduler-plugins\": its default\n"
	"                                 scheduler name); default: none. PodGroups are watched\n"
	"  --enable-scheme S              tfjob (any case); others are not supported here. Repeatable\n"
	"  --cluster-domain D             TF_CONFIG addresses' domain (default: $CUSTOM_CLUSTER_DOMAIN)\n"
	"  --compat C                     training-operator-1.9 reproduces v1.9 exactly (default: documented)\n"
	"  --metrics-bind-address ADDR    Prometheus /metrics (default :8080; 0 = off)\n"
	"  --health-probe-bind-address ADDR\n"
	"                                 /healthz and /readyz (default :8081; 0 = off)\n"
	"  --log-level L, --zap-log-level L\n"
	"                                 debug | info | warn | error (default info; zap's panic is error,\n"
	"                                 a number > 0 is debug); --zap-devel is debug\n"
	"  --webhook-server-port N        the port of the TFJob validating admission webhook (HTTPS).\n"
	"                                 The webhook is off unless a --webhook-* flag is given; then it\n"
	"                                 listens on N (default 9443). N = 0 keeps it off\n"
	"  --webhook-host HOST            the webhook's listen address (default: all interfaces)\n"
	"  --webhook-service-name S       its certificate is for S.<namespace>.svc (default training-operator)\n"
	"  --webhook-secret-name S        Secret holding the CA and certificate, in $MY_POD_NAMESPACE\n"
	"                                 (default kubeflow); made, rotated and reloaded by the operator\n"
	"                                 (default name training-operator-webhook-cert)\n"
	"  --webhook-config-name S        ValidatingWebhookConfiguration given the CA as caBundle\n"
	"                                 (default validator.training-operator.kubeflow.org)\n"
	"  --webhook-cert-hosts LIST      more DNS names or IP addresses for the certificate, comma-\n"
	"                                 separated (a webhook registered by URL)\n"
	"  --webhook-cert-validity D      validity of the CA and certificate (default 87600h); renewed\n"
	"                                 when a third of it (at most 90 days) is left\n"
	"  --webhook-cert-dir DIR         serve DIR/tls.crt and DIR/tls.key instead, re-read when they\n"
	"                                 change (cert-manager); no Secret or caBundle is managed\n"
	"  --http-idle-timeout D          close a connection silent for D (default 15s)\n"
	"  --http-request-timeout D       close a connection whose request is not complete D after it\n"
	"                                 could start (default 30s). D: seconds, or Go-style 500ms, 2m, 1h\n"
	"  --version                      print the version and exit\n";

static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;

static void log_line(tfjob_log_level level, const char *msg, const char *fields_json, void *payload)
{
	(void)payload;
	static const char *names[] = { "debug", "info", "warn", "error" };
	json_t *o = fields_json ? json_loads(fields_json, 0, NULL) : NULL;
	if (!json_is_object(o)) {
		json_decref(o);
		o = json_object();
	}
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	json_object_set_new(o, "ts", json_real((double)ts.tv_sec + (double)ts.tv_nsec / 1e9));
	json_object_set_new(o, "level", json_string(names[(unsigned)level < 4 ? level : 3]));
	json_object_set_new(o, "msg", json_string(msg));
	char *text = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(o);
	pthread_mutex_lock(&log_mu);
	fprintf(stderr, "%s\n", text ? text : msg);
	fflush(stderr);
	pthread_mutex_unlock(&log_mu);
	free(text);
}

static void logf1(tfjob_log_level level, const char *msg, const char *key, const char *value)
{
	json_t *o = json_object();
	if (key && value)
		json_object_set_new(o, key, json_string(value));
	char *t = json_dumps(o, JSON_COMPACT);
	log_line(level, msg, t, NULL);
	free(t);
	json_decref(o);
}

static int need(int argc, char **argv, int i)
{
	if (i + 1 >= argc) {
		fprintf(stderr, "tfjob-operator: %s needs a value\n%s", argv[i], usage);
		exit(2);
	}
	return i + 1;
}

/* The admission webhook's flags. */
typedef struct webhook_flags {
	int enabled;
	long port;
	const char *host, *service, *secret, *config, *cert_dir, *cert_hosts;
	long long validity_s;
	int idle_timeout_s, request_timeout_s;
} webhook_flags;

/* Seconds of a duration given as seconds ("30") or Go-style ("500ms", "90s", "5m", "87600h");
   -1 when it is not one. Sub-second values round up to 1 s. */
static long long parse_duration_s(const char *v)
{
	char *end;
	double n = strtod(v, &end);
	if (end == v || n < 0)
		return -1;
	double scale = !*end || !strcmp(end, "s") ? 1 : !strcmp(end, "ms") ? 0.001 : !strcmp(end, "m") ? 60
	               : !strcmp(end, "h") ? 3600 : -1;
	if (scale < 0 || n * scale > 1e12)
		return -1;
	long long s = (long long)(n * scale);
	return s == 0 && n > 0 ? 1 : s;
}

static long long duration_flag(const char *flag, const char *v)
{
	long long s = parse_duration_s(v);
	if (s <= 0) {
		fprintf(stderr, "tfjob-operator: %s %s: expected a positive duration (30s, 5m, 87600h)\n", flag, v);
		exit(2);
	}
	return s;
}

enum flag_kind { FLAG_PORT, FLAG_STRING, FLAG_VALIDITY, FLAG_TIMEOUT };

/* The webhook's and the HTTP servers' flags: where each value goes, and whether the flag turns
   the webhook on. */
static const struct webhook_flag_spec {
	const char *name;
	enum flag_kind kind;
	size_t offset;
	int enables_webhook;
} webhook_flag_specs[] = {
	{ "--webhook-server-port", FLAG_PORT, offsetof(webhook_flags, port), 1 },
	{ "--webhook-host", FLAG_STRING, offsetof(webhook_flags, host), 1 },
	{ "--webhook-service-name", FLAG_STRING, offsetof(webhook_flags, service), 1 },
	{ "--webhook-secret-name", FLAG_STRING, offsetof(webhook_flags, secret), 1 },
	{ "--webhook-config-name", FLAG_STRING, offsetof(webhook_flags, config), 1 },
	{ "--webhook-cert-dir", FLAG_STRING, offsetof(webhook_flags, cert_dir), 1 },
	{ "--webhook-cert-hosts", FLAG_STRING, offsetof(webhook_flags, cert_hosts), 1 },
	{ "--webhook-cert-validity", FLAG_VALIDITY, offsetof(webhook_flags, validity_s), 1 },
	{ "--http-idle-timeout", FLAG_TIMEOUT, offsetof(webhook_flags, idle_timeout_s), 0 },
	{ "--http-request-timeout", FLAG_TIMEOUT, offsetof(webhook_flags, request_timeout_s), 0 },
};

static long parse_port(const char *v)
{
	char *end;
	long port = strtol(v, &end, 10);
	if (*end || end == v || port < 0 || port > 65535) {
		fprintf(stderr, "tfjob-operator: --webhook-server-port %s: expected a port number\n", v);
		exit(2);
	}
	return port;
}

/* Take argv's flag a if it is one of webhook_flag_specs (its value fetched by get_value): 1. */
static int webhook_flag(webhook_flags *w, const char *a, const char *(*get_value)(void *), void *ctx)
{
	const struct webhook_flag_spec *f = webhook_flag_specs;
	const struct webhook_flag_spec *end = f + sizeof(webhook_flag_specs) / sizeof(webhook_flag_specs[0]);
	while (f < end && strcmp(a, f->name))
		f++;
	if (f == end)
		return 0;
	const char *v = get_value(ctx);
	char *field = (char *)w + f->offset;
	long long secs;
	switch (f->kind) {
	case FLAG_PORT:
		*(long *)field = parse_port(v);
		break;
	case FLAG_STRING:
		*(const char **)field = v;
		break;
	case FLAG_VALIDITY:
		*(long long *)field = duration_flag(a, v);
		break;
	case FLAG_TIMEOUT:
		secs = duration_flag(a, v);
		*(int *)field = secs > 86400 ? 86400 : (int)secs;
		break;
	}
	w->enabled |= f->enables_webhook;
	return 1;
}

typedef struct argv_cursor {
	int argc;
	char **argv;
	int *i;
	const char *eq_value;
} argv_cursor;

static int need(int argc, char **argv, int i);

static const char *cursor_value(void *ctx)
{
	argv_cursor *c = ctx;
	return c->eq_value ? c->eq_value : c->argv[(*c->i = need(c->argc, c->argv, *c->i))];
}

static void log_denied(const char *job, const char *message)
{
	json_t *o = json_pack("{s:s,s:s}", "tfjob", job, "message", message);
	char *t = o ? json_dumps(o, JSON_COMPACT) : NULL;
	log_line(TFJOB_LOG_INFO, "webhook: TFJob denied", t, NULL);
	free(t);
	json_decref(o);
}

/* Split a comma-separated list in place into at most max names. */
static size_t split_names(char *list, const char **names, size_t max)
{
	size_t n = 0;
	for (char *save = NULL, *tok = strtok_r(list, ",", &save); tok && n < max; tok = strtok_r(NULL, ",", &save))
		if (*tok)
			names[n++] = tok;
	return n;
}

/* Start the certificate manager for w: 0, or -1 after logging why. */
static int start_certs(op_certmgr **out, const webhook_flags *w, tfjob_transport *t)
{
	static char hosts[4096];
	const char *extra[32];
	snprintf(hosts, sizeof(hosts), "%s", w->cert_hosts ? w->cert_hosts : "");
	op_certmgr_options o = { 0 };
	o.transport = t;
	o.namespace_name = getenv("MY_POD_NAMESPACE") && *getenv("MY_POD_NAMESPACE") ? getenv("MY_POD_NAMESPACE")
	                                                                              : "kubeflow";
	o.secret_name = w->secret ? w->secret : OP_CERTMGR_DEFAULT_SECRET;
	o.service_name = w->service ? w->service : OP_CERTMGR_DEFAULT_SERVICE;
	o.config_name = w->config ? w->config : OP_CERTMGR_DEFAULT_CONFIG;
	o.extra_names = extra;
	o.extra_count = split_names(hosts, extra, sizeof(extra) / sizeof(extra[0]));
	o.validity_s = w->validity_s;
	o.cert_dir = w->cert_dir;
	o.log = logf1;
	char ebuf[256];
	if (op_certmgr_start(out, &o, ebuf, sizeof(ebuf))) {
		logf1(TFJOB_LOG_ERROR, "webhook: cannot manage certificates", "error", ebuf);
		return -1;
	}
	logf1(TFJOB_LOG_INFO, w->cert_dir ? "webhook: certificates from a directory" : "webhook: certificates in a Secret",
	      w->cert_dir ? "dir" : "secret", w->cert_dir ? w->cert_dir : o.secret_name);
	return 0;
}

/* Go's runtime raises the soft limit of open files to the hard one: so do we, for the servers. */
/* glibc's malloc gives a thread that meets another in malloc an arena of its own, up to 8 per
   core, and each arena keeps what is freed in it for itself: with the operator's dozen threads
   that was about 0.5 MB of RSS held for nothing at 100 jobs (bench/operator.sh, smaps). Its
   threads allocate little and seldom at once: two arenas serve them at the same CPU. An explicit
   MALLOC_ARENA_MAX in the environment wins. */
#define OP_MALLOC_ARENAS 2

static void limit_malloc_arenas(void)
{
	if (!getenv("MALLOC_ARENA_MAX"))
		mallopt(M_ARENA_MAX, OP_MALLOC_ARENAS);
}

static void raise_open_files_limit(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

int main(int argc, char **argv)
{
	limit_malloc_arenas(); /* before any thread starts */
	const char *ns = NULL, *kubeconfig = NULL, *le_id = NULL, *le_ns = NULL, *gang = NULL, *compat_s = NULL;
	const char *metrics_addr = ":8080", *health_addr = ":8081", *log_level = "info";
	const char *cluster_domain = getenv("CUSTOM_CLUSTER_DOMAIN");
	if (getenv("KUBEFLOW_NAMESPACE") && *getenv("KUBEFLOW_NAMESPACE"))
		ns = getenv("KUBEFLOW_NAMESPACE"); /* training-operator's default of --namespace */
	webhook_flags wf = { 0 };
	wf.port = 9443;
	char webhook_addr[300];
	double qps = 20;
	int burst = 30, workers = 1, leader = 0, writers = TFJOB_CONTROLLER_STATUS_WRITERS_DEFAULT;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		/* accept --flag=value too */
		char *eq = NULL;
		if (!strncmp(a, "--", 2) && (eq = strchr(argv[i], '=')))
			*eq = 0;
#define VAL() (eq ? eq + 1 : argv[(i = need(argc, argv, i))])
		if (!strcmp(a, "--namespace"))
			ns = VAL();
		else if (!strcmp(a, "--kubeconfig"))
			kubeconfig = VAL();
		else if (!strcmp(a, "--kube-api-qps"))
			qps = atof(VAL());
		else if (!strcmp(a, "--kube-api-burst"))
			burst = atoi(VAL());
		else if (!strcmp(a, "--threadiness") || !strcmp(a, "--workers") || !strcmp(a, "--controller-threads"))
			workers = atoi(VAL());
		else if (!strcmp(a, "--status-writers"))
			writers = atoi(VAL());
		else if (!strcmp(a, "--leader-elect") || !strcmp(a, "--enable-leader-election"))
			leader = eq ? strcmp(eq + 1, "false") != 0 : 1;
		else if (!strcmp(a, "--leader-election-id"))
			le_id = VAL();
		else if (!strcmp(a, "--leader-election-namespace"))
			le_ns = VAL();
		else if (!strcmp(a, "--gang-scheduler-name"))
			gang = VAL();
		else if (!strcmp(a, "--cluster-domain"))
			cluster_domain = VAL();
		else if (!strcmp(a, "--compat"))
			compat_s = VAL();
		else if (!strcmp(a, "--metrics-bind-address"))
			metrics_addr = VAL();
		else if (!strcmp(a, "--health-probe-bind-address"))
			health_addr = VAL();
		else if (!strcmp(a, "--log-level"))
			log_level = VAL();
		else if (!strcmp(a, "--zap-log-level")) {
			const char *v = VAL();
			char *end;
			long n = strtol(v, &end, 10);
			log_level = !*end && end != v ? (n > 0 ? "debug" : n < 0 ? "error" : "info")
			            : !strcasecmp(v, "panic") || !strcasecmp(v, "dpanic") ? "error" : v;
		} else if (!strcmp(a, "--zap-devel"))
			log_level = eq && !strcmp(eq + 1, "false") ? log_level : "debug";
		else if (!strcmp(a, "--enable-scheme")) {
			const char *v = VAL();
			if (strcasecmp(v, "tfjob")) {
				fprintf(stderr, "tfjob-operator: --enable-scheme %s: only tfjob is supported by tfjob-operator\n", v);
				return 2;
			}
		} else if (webhook_flag(&wf, a, cursor_value, &(argv_cursor){ argc, argv, &i, eq ? eq + 1 : NULL }))
			;
		else if (!strcmp(a, "--version")) {
			printf("tfjob-operator %s\n", TFJOB_VERSION);
			return 0;
		} else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(usage, stdout);
			return 0;
		} else {
			fprintf(stderr, "tfjob-operator: unknown flag %s\n%s", a, usage);
			return 2;
		}
#undef VAL
	}
	if (strcmp(log_level, "debug") && strcmp(log_level, "info") && strcmp(log_level, "warn") &&
	    strcmp(log_level, "error")) {
		fprintf(stderr, "tfjob-operator: unknown log level %s (debug, info, warn, error)\n", log_level);
		return 2;
	}
	if (workers < 1 || workers > 1024 || burst < 0) {
		fprintf(stderr, "tfjob-operator: bad --threadiness or --kube-api-burst\n");
		return 2;
	}
	if (writers < 0 || writers > 1024) {
		fprintf(stderr, "tfjob-operator: bad --status-writers %d (0 to 1024)\n", writers);
		return 2;
	}
	tfjob_controller_hooks hooks = TFJOB_CONTROLLER_HOOKS_INIT;
	hooks.log = log_line;
	hooks.log_level = !strcmp(log_level, "debug") ? TFJOB_LOG_DEBUG
	                  : !strcmp(log_level, "warn") ? TFJOB_LOG_WARN
	                  : !strcmp(log_level, "error") ? TFJOB_LOG_ERROR : TFJOB_LOG_INFO;
	tfjob_controller_options co = TFJOB_CONTROLLER_OPTIONS_INIT;
	co.namespace_name = ns;
	co.workers = workers;
	co.status_writers = writers ? writers : -1;
	co.cluster_domain = cluster_domain && *cluster_domain ? cluster_domain : NULL;
	co.leader_election = leader;
	co.leader_election_id = le_id;
	co.leader_election_namespace = le_ns;
	co.hooks = &hooks;
	if (compat_s && tfjob_compat_from_string(&co.compat, compat_s)) {
		fprintf(stderr, "tfjob-operator: unknown --compat %s\n", compat_s);
		return 2;
	}
	if (gang && *gang) {
		/* As training-operator: volcano (any case), else scheduler-plugins with that scheduler name. */
		if (!strcasecmp(gang, "volcano")) {
			co.gang_scheduler = TFJOB_GANG_VOLCANO;
		} else {
			co.gang_scheduler = TFJOB_GANG_SCHEDULER_PLUGINS;
			if (strcmp(gang, "scheduler-plugins"))
				co.scheduler_name = gang;
		}
	}

	/* Signals are taken by the main thread only. */
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	raise_open_files_limit();

	if (tfjob_global_init()) {
		fprintf(stderr, "tfjob-operator: global init failed\n");
		return 1;
	}
	tfjob_kube_options ko = TFJOB_KUBE_OPTIONS_INIT;
	ko.kubeconfig = kubeconfig;
	ko.qps = qps;
	ko.burst = burst;
	ko.user_agent = "tfjob-operator/" TFJOB_VERSION;
	tfjob_transport *t = NULL;
	tfjob_controller *c = NULL;
	op_http *http = NULL;
	op_certmgr *certs = NULL;
	tfjob_error *err = NULL;
	int status = 1;
	if (tfjob_kube_transport_new(&t, &ko, &err)) {
		logf1(TFJOB_LOG_ERROR, "cannot configure the Kubernetes client", "error", tfjob_error_message(err));
		goto out;
	}
	logf1(TFJOB_LOG_INFO, "starting tfjob-operator", "server", tfjob_kube_transport_server(t));
	if (wf.enabled && wf.port == 0)
		wf.enabled = 0;
	op_webhook webhook = { co.compat, log_denied };
	if (wf.enabled && start_certs(&certs, &wf, t))
		goto out;
	if (co.gang_scheduler != TFJOB_GANG_NONE)
		logf1(TFJOB_LOG_INFO, "gang scheduling: PodGroups are listed and watched", "gang-scheduler",
		      co.gang_scheduler == TFJOB_GANG_VOLCANO ? "volcano" : "scheduler-plugins");
	if (tfjob_controller_new(&c, t, &co, &err)) {
		logf1(TFJOB_LOG_ERROR, "cannot make the controller", "error", tfjob_error_message(err));
		goto out;
	}
	char ebuf[256];
	snprintf(webhook_addr, sizeof(webhook_addr), strchr(wf.host ? wf.host : "", ':') ? "[%s]:%ld" : "%s:%ld",
	         wf.host ? wf.host : "", wf.port);
	op_http_options ho = { .metrics_addr = metrics_addr, .health_addr = health_addr, .webhook_addr = webhook_addr,
		               .controller = c, .leader_election = leader, .idle_timeout_s = wf.idle_timeout_s,
		               .request_timeout_s = wf.request_timeout_s,
		               .webhook = wf.enabled ? op_webhook_review : NULL, .webhook_payload = &webhook,
		               .webhook_path = OP_WEBHOOK_PATH, .webhook_ready = op_certmgr_ready,
		               .ready_payload = certs };
	if (op_http_start(&http, &ho, ebuf, sizeof(ebuf))) {
		logf1(TFJOB_LOG_ERROR, "cannot serve probes and metrics", "error", ebuf);
		goto out;
	}
	{
		char ports[64];
		snprintf(ports, sizeof(ports), "%d,%d", op_http_port(http, 0), op_http_port(http, 1));
		logf1(TFJOB_LOG_INFO, "serving metrics and probes", "ports", ports);
		if (wf.enabled) {
			snprintf(ports, sizeof(ports), "%d", op_http_port(http, 2));
			logf1(TFJOB_LOG_INFO, "serving the admission webhook (HTTPS)", "webhook_port", ports);
		}
	}
	/* The first list may fail while the API server is not reachable yet: retry. */
	for (;;) {
		int rc = tfjob_controller_start(c, &err);
		if (rc == 0)
			break;
		logf1(TFJOB_LOG_ERROR, "cannot start the controller, retrying", "error", tfjob_error_message(err));
		tfjob_error_free(err);
		err = NULL;
		op_http_set_controller(http, NULL); /* the probes and the webhook stay up meanwhile */
		tfjob_controller_free(c);
		c = NULL;
		struct timespec ts = { 2, 0 };
		siginfo_t si;
		if (sigtimedwait(&set, &si, &ts) > 0) {
			status = 0;
			goto out;
		}
		if (tfjob_controller_new(&c, t, &co, &err))
			goto out;
		op_http_set_controller(http, c);
	}
	for (;;) {
		/* Only a leader can stop by itself (its lease lost): look for that 5 times a second;
		   without leader election, sleep until a signal comes. */
		struct timespec ts = { 0, 200 * 1000 * 1000 };
		siginfo_t si;
		int sig = leader ? sigtimedwait(&set, &si, &ts) : sigwaitinfo(&set, &si);
		if (sig > 0) {
			logf1(TFJOB_LOG_INFO, "signal received, stopping", "signal", sig == SIGTERM ? "SIGTERM" : "SIGINT");
			status = 0;
			break;
		}
		if (tfjob_controller_wait_stopped(c, 0) == 0) {
			logf1(TFJOB_LOG_ERROR, "leader election lost", NULL, NULL);
			status = 1;
			break;
		}
	}
out:
	tfjob_controller_stop(c);
	op_http_stop(http);
	op_certmgr_stop(certs);
	op_tls_store_clear();
	tfjob_controller_free(c);
	tfjob_transport_free(t);
	tfjob_error_free(err);
	tfjob_global_cleanup();
	if (status == 0)
		logf1(TFJOB_LOG_INFO, "stopped", NULL, NULL);
	return status;
}
