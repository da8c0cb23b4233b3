/*
 * tfjobctl diagnose JOB: walk the steps from a TFJob to its running containers and say which one
 * fails and why.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "connection.h"
#include "local_view.h"

#define DEFAULT_LEASE "1ca428e5.training-operator.kubeflow.org"

static const tfjob_resource leases = { "coordination.k8s.io", "v1", "leases", 1 };

void usage_diagnose(FILE *out)
{
	fprintf(out,
	        "usage: tfjobctl diagnose JOB [--lease-name N] [--lease-namespace NS] [--kubeconfig F]\n"
	        "                         [--context C] [-n NS]\n\n"
	        "Walk the steps from a TFJob to its running containers and say which step fails and why:\n"
	        "  spec        the TFJob is valid (as the API server and the operator's webhook judge it)\n"
	        "  controller  who runs it: runPolicy.managedBy, runPolicy.suspend, and the operator's\n"
	        "              leader Lease (held? by whom? renewed when?)\n"
	        "  status      the operator has written a status (none: it is not running, or not for\n"
	        "              this namespace)\n"
	        "  pods        every replica's pod was created (else the job's Warning Events say why)\n"
	        "  scheduling  every pod is bound to a node (else the scheduler's reason: insufficient\n"
	        "              resources, taints, ...)\n"
	        "  containers  every container started (else its waiting reason: image pull errors, a\n"
	        "              missing Secret, ConfigMap or volume, ...), restarts and last exit codes\n"
	        "Events of the job and of its pods back each finding.\n\n"
	        "  --lease-name N  the operator's leader election Lease (default " DEFAULT_LEASE ",\n"
	        "                  tfjob-operator's and training-operator's --leader-election-id)\n"
	        "  --lease-namespace NS  where it is (default: looked up in every namespace)\n"
	        CTL_CLUSTER_USAGE "\n"
	        "Exit status: 0 no step fails, 1 a step fails (or the server answered with an error),\n"
	        "2 usage, configuration or connection error.\n");
}

struct diag {
	int failed;          /* a step failed: the later ones are not judged */
	char verdict[2200];  /* the first failure, for the last line */
};

/* One step's line: "  [ok]   step  text", "  [FAIL] ...", "  [--]   ..." (not checked), "  [note] ...". */
static void step(struct diag *d, const char *mark, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void step(struct diag *d, const char *mark, const char *name, const char *fmt, ...)
{
	char text[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof text, fmt, ap);
	va_end(ap);
	printf("  %-6s %-11s %s\n", mark, name, text);
	if (!strcmp(mark, "[FAIL]") && !d->failed) {
		d->failed = 1;
		snprintf(d->verdict, sizeof d->verdict, "%s: %s", name, text);
	}
}

/* "12s", "3m20s", "2h5m" */
static void ago(char *buf, size_t size, int64_t seconds)
{
	if (seconds < 0)
		seconds = 0;
	if (seconds < 60)
		snprintf(buf, size, "%llds", (long long)seconds);
	else if (seconds < 3600)
		snprintf(buf, size, "%lldm%llds", (long long)(seconds / 60), (long long)(seconds % 60));
	else
		snprintf(buf, size, "%lldh%lldm", (long long)(seconds / 3600), (long long)(seconds / 60 % 60));
}

static json_t *get_list(tfjob_transport *t, const tfjob_resource *res, const char *ns, const char *label,
                        const char *field, tfjob_error **err)
{
	tfjob_list_options lo = TFJOB_LIST_OPTIONS_INIT;
	lo.label_selector = label;
	lo.field_selector = field;
	char *text = NULL;
	if (tfjob_transport_list(&text, t, res, ns, &lo, err))
		return NULL;
	json_t *v = json_loads(text, 0, NULL);
	tfjob_free(text);
	return v;
}

/* The Warning Events of one object, each as an indented line; how many. */
static int print_warnings(const json_t *events, const char *kind, const char *name)
{
	int n = 0;
	size_t i;
	json_t *e;
	json_array_foreach(json_object_get(events, "items"), i, e) {
		const json_t *o = json_object_get(e, "involvedObject");
		if (strcmp(ctl_str(e, "type"), "Warning") || strcmp(ctl_str(o, "kind"), kind) || strcmp(ctl_str(o, "name"), name))
			continue;
		long long count = (long long)json_integer_value(json_object_get(e, "count"));
		printf("%21sEvent %s %s/%s: %s", "", ctl_str(e, "reason"), kind, name, ctl_str(e, "message"));
		if (count > 1)
			printf(" (x%lld)", count);
		printf("\n");
		n++;
	}
	return n;
}

static void check_spec(struct diag *d, const char *text)
{
	tfjob_job *job = NULL;
	tfjob_error *err = NULL;
	tfjob_field_errors *errs = NULL;
	tfjob_validate_options vo = TFJOB_VALIDATE_OPTIONS_INIT;
	vo.strict = 0; /* the server pruned unknown fields already */
	if (tfjob_job_parse(&job, text, strlen(text), NULL, &err) || tfjob_job_validate(&errs, job, &vo, &err)) {
		step(d, "[FAIL]", "spec", "cannot be read: %s", tfjob_error_message(err));
		tfjob_error_free(err);
	} else if (tfjob_field_errors_count(errs)) {
		step(d, "[FAIL]", "spec", "invalid: the operator will not run it (%zu error%s)",
		     tfjob_field_errors_count(errs), tfjob_field_errors_count(errs) == 1 ? "" : "s");
		for (size_t i = 0; i < tfjob_field_errors_count(errs); i++)
			printf("%21s%s\n", "", tfjob_field_errors_message(errs, i));
	} else {
		step(d, "[ok]", "spec", "valid");
	}
	tfjob_field_errors_free(errs);
	tfjob_job_free(job);
}

/* The leader Lease: held, by whom, renewed when. 1 when a live holder was found. */
static int check_lease(struct diag *d, tfjob_transport *t, const char *name, const char *ns, bool has_status)
{
	char field[400];
	snprintf(field, sizeof field, "metadata.name=%s", name);
	tfjob_error *err = NULL;
	json_t *list = get_list(t, &leases, ns ? ns : "", NULL, field, &err);
	if (!list) {
		step(d, "[note]", "controller", "cannot read the Lease %s (%s): the operator's leader not checked", name,
		     tfjob_error_message(err));
		tfjob_error_free(err);
		return -1;
	}
	const json_t *lease = json_array_get(json_object_get(list, "items"), 0);
	int live = 0;
	if (!lease) {
		step(d, has_status ? "[note]" : "[FAIL]", "controller",
		     "no leader Lease %s%s%s: is tfjob-operator running (with --leader-elect; without it there is no "
		     "Lease)?", name, ns ? " in namespace " : "", ns ? ns : "");
	} else {
		const json_t *spec = json_object_get(lease, "spec");
		const char *holder = ctl_str(spec, "holderIdentity");
		int64_t renewed, now = (int64_t)time(NULL);
		json_int_t duration = json_integer_value(json_object_get(spec, "leaseDurationSeconds"));
		char when[32] = "never";
		bool known = !tfjob_time_parse(&renewed, ctl_str(spec, "renewTime"));
		if (known)
			ago(when, sizeof when, now - renewed);
		live = holder[0] && known && now - renewed <= (duration > 0 ? duration : 15);
		const char *lns = ctl_str(json_object_get(lease, "metadata"), "namespace");
		if (live)
			step(d, "[ok]", "controller", "the leader Lease %s/%s is held by %s, renewed %s ago (for %llds)", lns, name,
			     holder, when, (long long)duration);
		else
			step(d, has_status ? "[note]" : "[FAIL]", "controller",
			     "the leader Lease %s/%s is %s%s%s, renewed %s%s: no operator is leading (crashed, or not running?)",
			     lns, name, holder[0] ? "held by " : "not held", holder, holder[0] ? "" : "", when,
			     known ? " ago" : "");
	}
	json_decref(list);
	return live;
}

/* A container's trouble: waiting for a reason other than starting, or restarting. */
static bool container_trouble(char *buf, size_t size, const json_t *cs)
{
	const json_t *wait = json_object_get(json_object_get(cs, "state"), "waiting");
	const json_t *last = json_object_get(json_object_get(cs, "lastState"), "terminated");
	json_int_t restarts = json_integer_value(json_object_get(cs, "restartCount"));
	if (wait && strcmp(ctl_str(wait, "reason"), "ContainerCreating") && strcmp(ctl_str(wait, "reason"), "PodInitializing")) {
		int n = snprintf(buf, size, "container %s is waiting: %s%s%s", ctl_str(cs, "name"), ctl_str(wait, "reason"),
		                 ctl_str(wait, "message")[0] ? ": " : "", ctl_str(wait, "message"));
		if (last && n >= 0 && (size_t)n < size)
			snprintf(buf + n, size - (size_t)n, " (restarts %lld, last exit %lld %s)", (long long)restarts,
			         (long long)json_integer_value(json_object_get(last, "exitCode")), ctl_str(last, "reason"));
		return true;
	}
	return false;
}

/* The replicas the spec asks for. */
static int64_t replicas_wanted(const json_t *job)
{
	int64_t want = 0;
	const char *type;
	json_t *rs;
	json_object_foreach(json_object_get(json_object_get(job, "spec"), "tfReplicaSpecs"), type, rs) {
		json_t *r = json_object_get(rs, "replicas");
		want += r ? json_integer_value(r) : 1;
	}
	return want;
}

/* Step "pods": were they all created? */
static void check_pods_created(struct diag *d, const json_t *job, const char *name, size_t have, const json_t *events)
{
	int64_t want = replicas_wanted(job);
	const char *state = ctl_job_state(job);
	bool over = !strcmp(state, "Succeeded") || !strcmp(state, "Failed");
	if ((int64_t)have < want && !over) {
		step(d, "[FAIL]", "pods", "%zu of %lld created: the operator could not create the others", have,
		     (long long)want);
		if (!print_warnings(events, "TFJob", name))
			printf("%21s(no Warning Event of the TFJob says why: see the operator's log)\n", "");
	} else {
		step(d, "[ok]", "pods", "%zu of %lld created%s", have, (long long)want,
		     over && (int64_t)have < want ? " (the others were cleaned up: the job is over)" : "");
	}
}

/* Step "scheduling": PodScheduled False, with the scheduler's message. Returns the pods waiting. */
static size_t check_scheduling(struct diag *d, const json_t *items, const json_t *events)
{
	size_t unscheduled = 0, i;
	json_t *p;
	json_array_foreach(items, i, p) {
		const json_t *st = json_object_get(p, "status");
		const char *pod = ctl_str(json_object_get(p, "metadata"), "name");
		if (ctl_str(json_object_get(p, "spec"), "nodeName")[0] || !strcmp(ctl_str(st, "phase"), "Succeeded") ||
		    !strcmp(ctl_str(st, "phase"), "Failed"))
			continue;
		const char *why = "not bound to a node yet (no scheduler running, or it has not seen the pod)";
		size_t k;
		json_t *c;
		char buf[1024];
		json_array_foreach(json_object_get(st, "conditions"), k, c)
			if (!strcmp(ctl_str(c, "type"), "PodScheduled") && !strcmp(ctl_str(c, "status"), "False")) {
				snprintf(buf, sizeof buf, "%s: %s", ctl_str(c, "reason"), ctl_str(c, "message"));
				why = buf;
			}
		if (!unscheduled++)
			step(d, "[FAIL]", "scheduling", "pod %s is not scheduled: %s", pod, why);
		else
			printf("%21spod %s is not scheduled: %s\n", "", pod, why);
		print_warnings(events, "Pod", pod);
	}
	return unscheduled;
}

/* A failing container step's line: the first one names the step, the others are indented. */
static void container_trouble_line(struct diag *d, size_t *trouble, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void container_trouble_line(struct diag *d, size_t *trouble, const char *fmt, ...)
{
	char line[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	if (!(*trouble)++)
		step(d, "[FAIL]", "containers", "%s", line);
	else
		printf("%21s%s\n", "", line);
}

/* A Pending pod on a node whose containers are not started: the first Warning Event about it
 * (a volume or Secret that cannot be mounted shows there). */
static void pending_pod_trouble(struct diag *d, size_t *trouble, const char *pod, const json_t *events)
{
	size_t e;
	json_t *ev;
	json_array_foreach(json_object_get(events, "items"), e, ev) {
		const json_t *o = json_object_get(ev, "involvedObject");
		if (!strcmp(ctl_str(ev, "type"), "Warning") && !strcmp(ctl_str(o, "kind"), "Pod") && !strcmp(ctl_str(o, "name"), pod)) {
			container_trouble_line(d, trouble, "pod %s is Pending: %s: %s", pod, ctl_str(ev, "reason"), ctl_str(ev, "message"));
			return;
		}
	}
}

/* Step "containers": waiting reasons (image pulls, missing Secrets/volumes). Returns the pods in trouble. */
static size_t check_containers(struct diag *d, const json_t *items, const json_t *events)
{
	size_t trouble = 0, i;
	json_t *p;
	json_array_foreach(items, i, p) {
		const char *pod = ctl_str(json_object_get(p, "metadata"), "name");
		const json_t *st = json_object_get(p, "status");
		size_t k;
		json_t *cs;
		char buf[1024];
		bool found = false;
		json_array_foreach(json_object_get(st, "containerStatuses"), k, cs)
			if (!found && container_trouble(buf, sizeof buf, cs)) {
				found = true;
				container_trouble_line(d, &trouble, "pod %s: %s", pod, buf);
			}
		if (found)
			print_warnings(events, "Pod", pod);
		else if (ctl_str(json_object_get(p, "spec"), "nodeName")[0] && !strcmp(ctl_str(st, "phase"), "Pending"))
			pending_pod_trouble(d, &trouble, pod, events);
	}
	return trouble;
}

/* Containers that restarted, as a note (not a failure). */
static void note_restarts(struct diag *d, const json_t *items, size_t have)
{
	size_t restarted = 0, i;
	json_t *p;
	json_array_foreach(items, i, p) {
		const json_t *cs = ctl_pod_tf_status(p);
		if (json_integer_value(json_object_get(cs, "restartCount")) > 0) {
			const json_t *last = json_object_get(json_object_get(cs, "lastState"), "terminated");
			if (!restarted++)
				step(d, "[note]", "containers", "some restarted:");
			printf("%21spod %s: %lld restarts, last exit %lld %s\n", "", ctl_str(json_object_get(p, "metadata"), "name"),
			       (long long)json_integer_value(json_object_get(cs, "restartCount")),
			       (long long)json_integer_value(json_object_get(last, "exitCode")), ctl_str(last, "reason"));
		}
	}
	if (!restarted)
		step(d, have ? "[ok]" : "[--]", "containers", have ? "started, none restarted" : "no pod yet");
}

static void check_children(struct diag *d, tfjob_transport *t, const json_t *job, const char *name)
{
	char label[300];
	snprintf(label, sizeof label, "%s=%s", TFJOB_LABEL_JOB_NAME, name);
	tfjob_error *err = NULL;
	json_t *pods = get_list(t, tfjob_resource_lookup("pods"), NULL, label, NULL, &err);
	if (!pods) {
		step(d, "[FAIL]", "pods", "cannot list them: %s", tfjob_error_message(err));
		tfjob_error_free(err);
		return;
	}
	json_t *events = get_list(t, &ctl_events, NULL, NULL, NULL, &err);
	tfjob_error_free(err);
	const json_t *items = json_object_get(pods, "items");
	size_t have = json_array_size(items);
	check_pods_created(d, job, name, have, events);
	if (check_scheduling(d, items, events))
		step(d, "[--]", "containers", "not judged while a pod waits for a node");
	else {
		step(d, have ? "[ok]" : "[--]", "scheduling", have ? "every pod is on a node" : "no pod to schedule");
		if (!check_containers(d, items, events))
			note_restarts(d, items, have);
	}
	json_decref(pods);
	json_decref(events);
}

static int diagnose(tfjob_transport *t, const char *name, const char *lease_name, const char *lease_ns)
{
	char *text = NULL;
	tfjob_error *err = NULL;
	if (tfjob_transport_get(&text, t, &ctl_tfjobs, NULL, name, &err))
		return ctl_api_fail(err);
	json_t *job = ctl_parse_json(text);
	if (!job) {
		tfjob_free(text);
		return EXIT_USAGE;
	}
	struct diag d = { 0 };
	printf("TFJob %s/%s:\n", ctl_str(json_object_get(job, "metadata"), "namespace"), name);
	check_spec(&d, text);
	tfjob_free(text);
	const json_t *rp = json_object_get(json_object_get(job, "spec"), "runPolicy");
	const json_t *st = json_object_get(job, "status");
	bool has_status = json_array_size(json_object_get(st, "conditions")) > 0;
	const char *manager = ctl_job_foreign_manager(job);
	bool stop = d.failed;
	if (!stop && manager) {
		step(&d, "[note]", "controller", "runPolicy.managedBy is %s: that controller runs this job and writes its "
		     "status; the training operator leaves it alone%s", manager, has_status ? "" : " (no status written yet)");
		stop = true;
	}
	if (!stop && json_is_true(json_object_get(rp, "suspend"))) {
		step(&d, "[note]", "controller", "runPolicy.suspend is true: no pods run until it is resumed");
		stop = true;
	}
	if (!stop)
		check_lease(&d, t, lease_name, lease_ns, has_status);
	if (!stop && !d.failed) {
		if (has_status) {
			const json_t *conds = json_object_get(st, "conditions");
			const json_t *c = json_array_get(conds, json_array_size(conds) - 1);
			step(&d, "[ok]", "status", "%s (%s: %s)", ctl_job_state(job), ctl_str(c, "reason"), ctl_str(c, "message"));
		} else {
			step(&d, "[FAIL]", "status", "none: no operator has taken the job (not running, watching other "
			     "namespaces only, or failing: see its log)");
		}
	}
	if (!stop && !d.failed)
		check_children(&d, t, job, name);
	if (d.failed)
		printf("Result: the step that fails is %s\n", d.verdict);
	else
		printf("Result: no step fails%s\n", stop ? " (the training operator does not run this job)" : "");
	json_decref(job);
	return d.failed ? EXIT_NEGATIVE : EXIT_OK;
}

int cmd_diagnose(int argc, char **argv)
{
	enum { OPT_LEASE_NAME = 0x3000, OPT_LEASE_NS };
	static const struct option longopts[] = {
		CTL_CLUSTER_LONGOPTS,
		{ "lease-name", required_argument, NULL, OPT_LEASE_NAME },
		{ "lease-namespace", required_argument, NULL, OPT_LEASE_NS },
		{ NULL, 0, NULL, 0 },
	};
	struct ctl_cluster cl = { 0 };
	const char *lease_name = DEFAULT_LEASE, *lease_ns = NULL;
	int ch;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":n:", longopts, NULL)) != -1) {
		if (ctl_cluster_option(&cl, ch, optarg))
			continue;
		if (ch == OPT_LEASE_NAME)
			lease_name = optarg;
		else if (ch == OPT_LEASE_NS)
			lease_ns = optarg;
		else if (ch == ':')
			return ctl_fail("diagnose: option '%s' needs a value", argv[optind - 1]);
		else
			return ctl_fail("diagnose: unknown option '%s' (see tfjobctl diagnose --help)", argv[optind - 1]);
	}
	if (optind != argc - 1)
		return ctl_fail("diagnose: expected exactly one JOB (see tfjobctl diagnose --help)");
	const char *name = ctl_object_name(argv[optind], "diagnose");
	if (!name)
		return EXIT_USAGE;
	tfjob_transport *t;
	int rc = ctl_connect(&t, &cl);
	if (rc)
		return rc;
	rc = diagnose(t, name, lease_name, lease_ns);
	ctl_disconnect(t);
	return rc;
}
