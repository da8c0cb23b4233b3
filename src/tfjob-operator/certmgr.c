/*
 * The webhook's certificate manager (certmgr.h).
 *
 * Rotation never leaves the API server with a CA bundle that does not trust the certificate
 * being served: a new CA is added to the caBundle (next to the old CAs that are still valid)
 * first, the API server is given OP_CERTMGR_PROPAGATION_S to see it, and only then is the new
 * certificate stored in the Secret and served. A serving certificate renewed under the same CA
 * needs no caBundle change at all. Several replicas share the Secret: writes carry the
 * resourceVersion read, and the loser of a conflict takes what the winner stored.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "certmgr.h"

#include <gnutls/gnutls.h>
#include <jansson.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>

#include "certs.h"
#include "stopper.h"
#include "tlsstore.h"

#define OP_CERTMGR_PROPAGATION_S 5
#define RETRY_S 5
#define DIR_PERIOD_S 2         /* re-read period of a directory that cannot be watched (yet) */
#define DIR_RECHECK_S 10       /* of a watched one, for files linked from elsewhere (as
                                  controller-runtime's certwatcher re-reads every 10 s) */
#define DIR_SETTLE_MS 100      /* a change is read once the directory has been quiet this long, */
#define DIR_SETTLE_MAX_MS 1000 /* or this long after the first event of a burst */
#define MAX_CHECK_PERIOD_S (12LL * 3600) /* v1.9's rotator checks twice a day */
#define MAX_LOOKAHEAD_S (90LL * 24 * 3600) /* and renews 90 days ahead */
#define MAX_BUNDLE_CAS 3
#define MAX_CERT_FILE (1024 * 1024)
#define CA_NAME "training-operator-ca"
#define CA_ORGANIZATION "training-operator"

static const tfjob_resource secrets_res = { "", "v1", "secrets", 1 };
static const tfjob_resource vwc_res = { "admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations", 0 };

struct op_certmgr {
	op_certmgr_options o;
	char **names;
	size_t name_count;
	pthread_t thread;
	op_stopper stop;
	atomic_int ready;
	char *served_crt; /* what the TLS store serves, to load a certificate once */
	char *seen_crt, *seen_key; /* cert-dir: the files' last contents */
	int inotify_fd;            /* cert-dir: -1 when inotify is not available */
	int watch;                 /* cert-dir: its inotify watch; -1 while it is not watched */
};

static void logm(op_certmgr *m, tfjob_log_level level, const char *msg, const char *key, const char *value)
{
	if (m->o.log)
		m->o.log(level, msg, key, value);
}

/* Wait up to seconds; 1 when asked to stop. */
static int sleep_or_stop(op_certmgr *m, long long seconds)
{
	return op_stopper_wait_ms(&m->stop, seconds * 1000);
}

static long long lookahead_s(const op_certmgr *m)
{
	long long l = m->o.validity_s / 3;
	return l > MAX_LOOKAHEAD_S ? MAX_LOOKAHEAD_S : l;
}

static char *b64decode(const char *s)
{
	gnutls_datum_t in = { (unsigned char *)(uintptr_t)s, (unsigned int)strlen(s) }, out = { NULL, 0 };
	if (gnutls_base64_decode2(&in, &out) < 0)
		return NULL;
	char *t = malloc(out.size + 1);
	if (t) {
		memcpy(t, out.data, out.size);
		t[out.size] = 0;
	}
	gnutls_free(out.data);
	return t;
}

static json_t *b64encode(const char *s)
{
	gnutls_datum_t in = { (unsigned char *)(uintptr_t)s, (unsigned int)strlen(s) }, out = { NULL, 0 };
	if (gnutls_base64_encode2(&in, &out) < 0)
		return NULL;
	json_t *j = json_stringn((const char *)out.data, out.size);
	gnutls_free(out.data);
	return j;
}

/* ---- PEM bundles ---- */

static const char PEM_BEGIN[] = "-----BEGIN CERTIFICATE-----", PEM_END[] = "-----END CERTIFICATE-----";

/* The next certificate block of *p (from BEGIN to END inclusive), or 0 when none is left. */
static int next_block(const char **p, const char **start, size_t *len)
{
	const char *b = *p ? strstr(*p, PEM_BEGIN) : NULL, *e = b ? strstr(b, PEM_END) : NULL;
	if (!e)
		return 0;
	*start = b;
	*len = (size_t)(e - b) + sizeof(PEM_END) - 1;
	*p = b + *len;
	return 1;
}

static int bundle_has(const char *bundle, const char *ca_pem)
{
	const char *p = ca_pem, *cs, *bs;
	size_t cl, bl;
	if (!next_block(&p, &cs, &cl))
		return 0;
	for (p = bundle; next_block(&p, &bs, &bl);)
		if (bl == cl && !memcmp(bs, cs, cl))
			return 1;
	return 0;
}

/* ca_pem, then the certificates of old that are still valid, at most MAX_BUNDLE_CAS in all. */
static char *merged_bundle(const char *ca_pem, const char *old)
{
	size_t cap = strlen(ca_pem) + (old ? strlen(old) : 0) + 2 * MAX_BUNDLE_CAS + 2, len = 0;
	char *out = malloc(cap);
	if (!out)
		return NULL;
	len = (size_t)snprintf(out, cap, "%s", ca_pem);
	if (len && out[len - 1] != '\n')
		out[len++] = '\n';
	const char *p = old, *bs;
	size_t bl;
	int kept = 1;
	time_t now = time(NULL);
	while (kept < MAX_BUNDLE_CAS && next_block(&p, &bs, &bl)) {
		char *one = strndup(bs, bl);
		if (one && !bundle_has(ca_pem, one) && op_certs_not_after(one) > now) {
			memcpy(out + len, one, bl);
			len += bl;
			out[len++] = '\n';
			kept++;
		}
		free(one);
	}
	out[len] = 0;
	return out;
}

/* ---- the ValidatingWebhookConfiguration ---- */

/* Add ca_pem to the caBundle of every webhook that lacks it. 1 when something changed. */
static int add_ca(json_t *vwc, const char *ca_pem)
{
	size_t i;
	json_t *wh;
	int changed = 0;
	json_array_foreach(json_object_get(vwc, "webhooks"), i, wh) {
		json_t *cc = json_object_get(wh, "clientConfig");
		if (!json_is_object(cc))
			continue;
		const char *b = json_string_value(json_object_get(cc, "caBundle"));
		char *bundle = b ? b64decode(b) : NULL;
		if (!bundle || !bundle_has(bundle, ca_pem)) {
			char *nb = merged_bundle(ca_pem, bundle);
			json_t *enc = nb ? b64encode(nb) : NULL;
			if (enc) {
				json_object_set_new(cc, "caBundle", enc);
				changed = 1;
			}
			free(nb);
		}
		free(bundle);
	}
	return changed;
}

/* Make sure every webhook of the configuration trusts ca_pem. 0 when it does. */
static int inject(op_certmgr *m, const char *ca_pem)
{
	for (int attempt = 0; attempt < 3; attempt++) {
		char *text = NULL;
		tfjob_error *err = NULL;
		int rc = tfjob_transport_get(&text, m->o.transport, &vwc_res, NULL, m->o.config_name, &err);
		json_t *vwc = rc ? NULL : json_loads(text, 0, NULL);
		tfjob_free(text);
		if (rc || !vwc) {
			logm(m, TFJOB_LOG_ERROR, "webhook: cannot read the ValidatingWebhookConfiguration",
			     m->o.config_name, err ? tfjob_error_message(err) : "not JSON");
			tfjob_error_free(err);
			json_decref(vwc);
			return -1;
		}
		if (!add_ca(vwc, ca_pem)) {
			json_decref(vwc);
			return 0;
		}
		char *body = json_dumps(vwc, JSON_COMPACT);
		json_decref(vwc);
		rc = body ? tfjob_transport_update(NULL, m->o.transport, &vwc_res, NULL, body, &err) : TFJOB_ENOMEM;
		free(body);
		if (rc == 0) {
			logm(m, TFJOB_LOG_INFO, "webhook: CA injected into the ValidatingWebhookConfiguration", "name",
			     m->o.config_name);
			return 0;
		}
		if (rc != TFJOB_ECONFLICT) {
			logm(m, TFJOB_LOG_ERROR, "webhook: cannot update the ValidatingWebhookConfiguration",
			     m->o.config_name, err ? tfjob_error_message(err) : "out of memory");
			tfjob_error_free(err);
			return -1;
		}
		tfjob_error_free(err);
	}
	return -1;
}

/* ---- the Secret ---- */

typedef struct secret_state {
	json_t *obj; /* NULL: no Secret yet */
	op_cert_pem ca, tls;
} secret_state;

static void secret_state_clear(secret_state *s)
{
	json_decref(s->obj);
	op_cert_pem_clear(&s->ca);
	op_cert_pem_clear(&s->tls);
	memset(s, 0, sizeof(*s));
}

static char *data_field(json_t *obj, const char *key)
{
	const char *v = json_string_value(json_object_get(json_object_get(obj, "data"), key));
	return v ? b64decode(v) : NULL;
}

static int read_secret(op_certmgr *m, secret_state *s)
{
	char *text = NULL;
	tfjob_error *err = NULL;
	int rc = tfjob_transport_get(&text, m->o.transport, &secrets_res, m->o.namespace_name, m->o.secret_name, &err);
	if (rc == TFJOB_ENOTFOUND) {
		tfjob_error_free(err);
		return 0;
	}
	if (rc == 0 && !(s->obj = json_loads(text, 0, NULL)))
		rc = TFJOB_EPARSE;
	tfjob_free(text);
	if (rc) {
		logm(m, TFJOB_LOG_ERROR, "webhook: cannot read the certificate Secret", m->o.secret_name,
		     err ? tfjob_error_message(err) : "not JSON");
		tfjob_error_free(err);
		return -1;
	}
	s->ca.crt = data_field(s->obj, "ca.crt");
	s->ca.key = data_field(s->obj, "ca.key");
	s->tls.crt = data_field(s->obj, "tls.crt");
	s->tls.key = data_field(s->obj, "tls.key");
	return 0;
}

static void set_data(json_t *data, const char *key, const char *pem)
{
	json_t *v = b64encode(pem);
	if (v)
		json_object_set_new(data, key, v);
}

/* Store s's certificates: 0 stored, 1 lost a race with another writer, -1 failed. */
static int write_secret(op_certmgr *m, secret_state *s)
{
	int create = !s->obj;
	json_t *obj = create ? json_pack("{s:s,s:s,s:{s:s,s:s},s:s}", "apiVersion", "v1", "kind", "Secret", "metadata",
	                                 "name", m->o.secret_name, "namespace", m->o.namespace_name, "type", "Opaque")
	                     : json_incref(s->obj);
	json_t *data = json_object_get(obj, "data");
	if (!json_is_object(data)) {
		data = json_object();
		json_object_set_new(obj, "data", data);
	}
	set_data(data, "ca.crt", s->ca.crt);
	set_data(data, "ca.key", s->ca.key);
	set_data(data, "tls.crt", s->tls.crt);
	set_data(data, "tls.key", s->tls.key);
	char *body = json_dumps(obj, JSON_COMPACT);
	json_decref(obj);
	tfjob_error *err = NULL;
	int rc = !body ? TFJOB_ENOMEM
	         : create ? tfjob_transport_create(NULL, m->o.transport, &secrets_res, m->o.namespace_name, body, &err)
	                  : tfjob_transport_update(NULL, m->o.transport, &secrets_res, m->o.namespace_name, body, &err);
	free(body);
	if (rc == 0) {
		logm(m, TFJOB_LOG_INFO, "webhook: new certificates stored in the Secret", "name", m->o.secret_name);
	} else if (rc == TFJOB_ECONFLICT || rc == TFJOB_EEXISTS) {
		logm(m, TFJOB_LOG_INFO, "webhook: the Secret changed meanwhile; reading it again", "name", m->o.secret_name);
		rc = 1;
	} else {
		logm(m, TFJOB_LOG_ERROR, "webhook: cannot store the certificate Secret", m->o.secret_name,
		     err ? tfjob_error_message(err) : "out of memory");
		rc = -1;
	}
	tfjob_error_free(err);
	return rc;
}

static int serve(op_certmgr *m, const op_cert_pem *tls)
{
	if (m->served_crt && !strcmp(m->served_crt, tls->crt))
		return 0;
	char ebuf[256], fp[80];
	if (op_tls_store_set(tls->crt, tls->key, ebuf, sizeof(ebuf))) {
		logm(m, TFJOB_LOG_ERROR, "webhook: cannot serve the certificate", "error", ebuf);
		return -1;
	}
	free(m->served_crt);
	m->served_crt = strdup(tls->crt);
	op_tls_store_fingerprint(fp, sizeof(fp));
	logm(m, TFJOB_LOG_INFO, "webhook: serving a new certificate", "sha256", fp);
	return 0;
}

/* New certificates into s: a serving certificate, and a CA too unless s's is good until `until`. */
static int renew(op_certmgr *m, secret_state *s, time_t until, int *new_ca)
{
	char why[256], ebuf[256];
	*new_ca = op_certs_check(&s->ca, NULL, NULL, 0, until, why, sizeof(why)) != 0;
	if (*new_ca) {
		op_cert_pem ca = { NULL, NULL };
		if (op_certs_make_ca(&ca, CA_NAME, CA_ORGANIZATION, m->o.validity_s, ebuf, sizeof(ebuf))) {
			logm(m, TFJOB_LOG_ERROR, "webhook: cannot make a CA", "error", ebuf);
			return -1;
		}
		op_cert_pem_clear(&s->ca);
		s->ca = ca;
	}
	op_cert_pem tls = { NULL, NULL };
	if (op_certs_make_serving(&tls, &s->ca, (const char *const *)m->names, m->name_count, m->o.validity_s, ebuf,
	                          sizeof(ebuf))) {
		logm(m, TFJOB_LOG_ERROR, "webhook: cannot make a serving certificate", "error", ebuf);
		return -1;
	}
	op_cert_pem_clear(&s->tls);
	s->tls = tls;
	return 0;
}

/* One pass over the Secret and the configuration. Returns the seconds until the next pass. */
static long long sync_secret(op_certmgr *m)
{
	secret_state s = { 0 };
	time_t now = time(NULL), until = now + (time_t)lookahead_s(m);
	char why[256];
	long long next = RETRY_S;
	if (read_secret(m, &s))
		goto out;
	if (op_certs_check(&s.tls, s.ca.crt, (const char *const *)m->names, m->name_count, until, why, sizeof(why))) {
		logm(m, TFJOB_LOG_INFO, "webhook: making new certificates", "reason", s.obj ? why : "no Secret yet");
		int new_ca = 0;
		if (renew(m, &s, until, &new_ca))
			goto out;
		/* the API server must trust a new CA before anything is signed by it is served */
		if (new_ca && (inject(m, s.ca.crt) || sleep_or_stop(m, OP_CERTMGR_PROPAGATION_S)))
			goto out;
		int w = write_secret(m, &s);
		if (w) {
			next = w > 0 ? 0 : RETRY_S;
			goto out;
		}
	}
	if (serve(m, &s.tls) || inject(m, s.ca.crt))
		goto out;
	atomic_store(&m->ready, 1);
	next = (long long)(op_certs_not_after(s.tls.crt) - (time_t)lookahead_s(m) - now);
	long long period = m->o.validity_s / 10 > MAX_CHECK_PERIOD_S ? MAX_CHECK_PERIOD_S : m->o.validity_s / 10;
	if (next > period)
		next = period;
	if (next < 1)
		next = 1;
out:
	secret_state_clear(&s);
	return next;
}

/* ---- a certificate directory ---- */

static char *read_small_file(const char *dir, const char *name)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *buf = malloc(MAX_CERT_FILE + 1);
	size_t n = buf ? fread(buf, 1, MAX_CERT_FILE + 1, f) : 0;
	fclose(f);
	if (!buf || n > MAX_CERT_FILE) {
		free(buf);
		return NULL;
	}
	buf[n] = 0;
	return buf;
}

static int same_text(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

static void sync_dir(op_certmgr *m)
{
	op_cert_pem p = { read_small_file(m->o.cert_dir, "tls.crt"), read_small_file(m->o.cert_dir, "tls.key") };
	if (same_text(p.crt, m->seen_crt) && same_text(p.key, m->seen_key)) {
		op_cert_pem_clear(&p);
		return;
	}
	char why[256];
	if (!p.crt || !p.key)
		snprintf(why, sizeof(why), "tls.crt or tls.key missing, unreadable or over 1 MiB");
	if (p.crt && p.key && op_certs_check(&p, NULL, NULL, 0, time(NULL), why, sizeof(why)) == 0) {
		if (serve(m, &p) == 0)
			atomic_store(&m->ready, 1);
	} else {
		logm(m, TFJOB_LOG_ERROR, "webhook: the certificate directory holds no usable certificate", m->o.cert_dir,
		     why);
	}
	free(m->seen_crt);
	free(m->seen_key);
	m->seen_crt = p.crt;
	m->seen_key = p.key;
}

/*
 * Watch the directory itself: a file written, replaced or removed in it, and the atomic swap of
 * a mounted Secret's "..data" link, are events in it. A directory that goes away (or is not
 * there yet) is watched again when it is next read.
 */
static void watch_dir(op_certmgr *m)
{
	if (m->watch >= 0 || m->inotify_fd < 0)
		return;
	m->watch = inotify_add_watch(m->inotify_fd, m->o.cert_dir,
	                             IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE | IN_ATTRIB |
	                             IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR);
}

/* Read the pending events; notes when the directory is no longer watched. */
static void read_dir_events(op_certmgr *m)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t n;
	while ((n = read(m->inotify_fd, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *e = (const struct inotify_event *)p;
			if (e->wd == m->watch && (e->mask & IN_MOVE_SELF)) /* the path may hold another one now */
				inotify_rm_watch(m->inotify_fd, m->watch);
			if (e->wd == m->watch && (e->mask & (IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF)))
				m->watch = -1;
			p += sizeof(*e) + e->len;
		}
	}
}

/* Wait for the directory to change (and settle), a re-read to be due, or a stop: 1 on a stop. */
static int wait_dir_change(op_certmgr *m)
{
	struct pollfd events = { .fd = m->inotify_fd, .events = POLLIN };
	if (m->watch < 0)
		return sleep_or_stop(m, DIR_PERIOD_S);
	if (op_stopper_poll(&m->stop, &events, DIR_RECHECK_S * 1000LL))
		return 1;
	if (!(events.revents & POLLIN))
		return 0;
	/* Writers replace the two files one after the other: read them once both are there. */
	for (int waited = 0; waited < DIR_SETTLE_MAX_MS && (events.revents & POLLIN); waited += DIR_SETTLE_MS) {
		read_dir_events(m);
		if (op_stopper_poll(&m->stop, &events, DIR_SETTLE_MS))
			return 1;
	}
	read_dir_events(m);
	return 0;
}

static void run_dir(op_certmgr *m)
{
	do {
		watch_dir(m); /* before the read: a change made meanwhile is then an event */
		sync_dir(m);
	} while (!wait_dir_change(m));
}

static void *certmgr_main(void *arg)
{
	op_certmgr *m = arg;
	if (m->o.cert_dir) {
		run_dir(m);
		return NULL;
	}
	while (!sleep_or_stop(m, sync_secret(m)))
		;
	return NULL;
}

static void free_names(op_certmgr *m)
{
	for (size_t i = 0; i < m->name_count; i++)
		free(m->names[i]);
	free(m->names);
}

int op_certmgr_start(op_certmgr **out, const op_certmgr_options *opts, char *errbuf, size_t errlen)
{
	op_certmgr *m = calloc(1, sizeof(*m));
	if (!m || !(m->names = calloc(opts->extra_count + 1, sizeof(char *)))) {
		free(m);
		snprintf(errbuf, errlen, "out of memory");
		return -1;
	}
	m->o = *opts;
	if (m->o.validity_s <= 0)
		m->o.validity_s = OP_CERTMGR_DEFAULT_VALIDITY_S;
	char svc[512];
	snprintf(svc, sizeof(svc), "%s.%s.svc", opts->service_name, opts->namespace_name);
	m->names[m->name_count++] = strdup(svc);
	for (size_t i = 0; i < opts->extra_count; i++)
		m->names[m->name_count++] = strdup(opts->extra_names[i]);
	for (size_t i = 0; i < m->name_count; i++)
		if (!m->names[i]) {
			free_names(m);
			free(m);
			snprintf(errbuf, errlen, "out of memory");
			return -1;
		}
	atomic_init(&m->ready, 0);
	/* Without inotify (none, or out of instances) the directory is read every DIR_PERIOD_S. */
	m->inotify_fd = m->o.cert_dir ? inotify_init1(IN_NONBLOCK | IN_CLOEXEC) : -1;
	m->watch = -1;
	const char *fail = NULL;
	if (op_stopper_init(&m->stop))
		fail = "cannot make an eventfd for the certificate thread";
	else if (pthread_create(&m->thread, NULL, certmgr_main, m))
		fail = "cannot start the certificate thread";
	if (fail) {
		snprintf(errbuf, errlen, "%s", fail);
		op_stopper_destroy(&m->stop);
		if (m->inotify_fd >= 0)
			close(m->inotify_fd);
		free_names(m);
		free(m);
		return -1;
	}
	*out = m;
	return 0;
}

int op_certmgr_ready(void *payload)
{
	op_certmgr *m = payload;
	return m && atomic_load(&m->ready);
}

void op_certmgr_stop(op_certmgr *m)
{
	if (!m)
		return;
	op_stopper_stop(&m->stop);
	pthread_join(m->thread, NULL);
	op_stopper_destroy(&m->stop);
	if (m->inotify_fd >= 0)
		close(m->inotify_fd);
	free_names(m);
	free(m->served_crt);
	free(m->seen_crt);
	free(m->seen_key);
	free(m);
}
