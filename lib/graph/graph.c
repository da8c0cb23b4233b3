/*
 * The replica graph of a TFJob and TF_CONFIG.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "graph/graph.h"
#include "core/job.h"
#include "util/sbuf.h"
#include "util/versioned_structs.h"

/* ---- options ---- */

int tfjob_render_options_init(tfjob_render_options *opts, unsigned int version)
{
	return tfjob__versioned_init(&tfjob__render_options_v, opts, version);
}

/* Host names, domains and addresses: printable ASCII without spaces. */
static bool plain_ascii(const char *s)
{
	for (const unsigned char *u = (const unsigned char *)s; *u; u++)
		if (*u <= 0x20 || *u >= 0x7f)
			return false;
	return true;
}

int tfjob__render_options_resolve(tfjob_render_options *dst, const tfjob_render_options *opts, tfjob_error **err)
{
	int rc = tfjob__versioned_copy(&tfjob__render_options_v, dst, opts, err);
	if (rc)
		return rc;
	if (dst->compat != TFJOB_COMPAT_DOCUMENTED && dst->compat != TFJOB_COMPAT_TRAINING_OPERATOR_1_9)
		return tfjob__fail(err, TFJOB_EINVAL, "unknown compat mode %d", (int)dst->compat);
	if (dst->gang_scheduler != TFJOB_GANG_NONE && dst->gang_scheduler != TFJOB_GANG_VOLCANO &&
	    dst->gang_scheduler != TFJOB_GANG_SCHEDULER_PLUGINS)
		return tfjob__fail(err, TFJOB_EINVAL, "unknown gang scheduler %d", (int)dst->gang_scheduler);
	if (dst->cluster_domain && !*dst->cluster_domain)
		dst->cluster_domain = NULL;
	if (dst->cluster_domain && !plain_ascii(dst->cluster_domain))
		return tfjob__fail(err, TFJOB_EINVAL, "cluster domain \"%s\" contains a space or a non-ASCII character",
		                   dst->cluster_domain);
	if (!dst->default_namespace || !*dst->default_namespace)
		dst->default_namespace = "default";
	if (!dst->scheduler_name || !*dst->scheduler_name)
		dst->scheduler_name = dst->gang_scheduler == TFJOB_GANG_VOLCANO ? "volcano" : "scheduler-plugins-scheduler";
	return 0;
}

/* ---- graph construction ---- */

const char *tfjob__rspec_path(char *buf, size_t size, const char *key, const char *suffix)
{
	snprintf(buf, size, "spec.tfReplicaSpecs[%s]%s", key, suffix ? suffix : "");
	return buf;
}

static int field_fail(tfjob_error **err, int code, const char *key, const char *suffix, const char *what)
{
	char path[512];
	tfjob__rspec_path(path, sizeof(path), key, suffix);
	return tfjob__fail_field(err, code, path, "%s", what);
}

void tfjob_graph_free(tfjob_graph *g)
{
	if (!g)
		return;
	for (size_t t = 0; t < g->ntypes; t++) {
		tfjob__rtype *r = &g->types[t];
		free(r->key);
		free(r->lower);
		free(r->restart_policy);
		free(r->names);
		free(r->name_off);
		free(r->addrs);
		free(r->addr_off);
		free(r->quoted);
		free(r->qoff);
		free(r->qprefix);
		free(r->qsuffix);
	}
	free(g->types);
	free(g->name);
	free(g->label_name);
	free(g->namespace);
	free(g->uid);
	free(g->cluster);
	free(g);
}

/* The tfjob-port of a replica spec's `tensorflow` container (v1.9: GetPortFromTFJob). */
static int read_port(int32_t *out, json_t *rspec, const char *key, tfjob_error **err)
{
	*out = TFJOB__DEFAULT_PORT;
	json_t *tmpl = json_object_get(rspec, "template");
	if (!tmpl || json_is_null(tmpl))
		return 0;
	if (!json_is_object(tmpl))
		return field_fail(err, TFJOB_ESCHEMA, key, ".template", "must be an object");
	json_t *spec = json_object_get(tmpl, "spec");
	if (!spec || json_is_null(spec))
		return 0;
	if (!json_is_object(spec))
		return field_fail(err, TFJOB_ESCHEMA, key, ".template.spec", "must be an object");
	json_t *containers = json_object_get(spec, "containers");
	if (!containers || json_is_null(containers))
		return 0;
	if (!json_is_array(containers))
		return field_fail(err, TFJOB_ESCHEMA, key, ".template.spec.containers", "must be an array");
	size_t ci;
	json_t *c;
	json_array_foreach(containers, ci, c) {
		char suffix[128];
		if (!json_is_object(c)) {
			snprintf(suffix, sizeof(suffix), ".template.spec.containers[%zu]", ci);
			return field_fail(err, TFJOB_ESCHEMA, key, suffix, "must be an object");
		}
		const char *name = tfjob__str(c, "name");
		if (!name || strcmp(name, TFJOB__CONTAINER_NAME))
			continue;
		json_t *ports = json_object_get(c, "ports");
		if (!ports || json_is_null(ports))
			continue;
		if (!json_is_array(ports)) {
			snprintf(suffix, sizeof(suffix), ".template.spec.containers[%zu].ports", ci);
			return field_fail(err, TFJOB_ESCHEMA, key, suffix, "must be an array");
		}
		size_t pi;
		json_t *p;
		json_array_foreach(ports, pi, p) {
			const char *pname = tfjob__str(p, "name");
			if (!pname || strcmp(pname, TFJOB__PORT_NAME))
				continue;
			json_t *cp = json_object_get(p, "containerPort");
			if (!json_is_integer(cp) || json_integer_value(cp) < 1 || json_integer_value(cp) > 65535) {
				snprintf(suffix, sizeof(suffix), ".template.spec.containers[%zu].ports[%zu].containerPort", ci, pi);
				return field_fail(err, TFJOB_ESCHEMA, key, suffix, "must be an integer from 1 to 65535");
			}
			*out = (int32_t)json_integer_value(cp);
			return 0;
		}
	}
	return 0;
}

static char *lower_dup(const char *s)
{
	char *d = tfjob__strdup(s);
	for (char *p = d; p && *p; p++)
		*p = (char)tolower((unsigned char)*p);
	return d;
}

static int cmp_rtype(const void *a, const void *b)
{
	const tfjob__rtype *x = a, *y = b;
	int c = strcmp(x->lower, y->lower);
	return c ? c : strcmp(x->key, y->key);
}

/* Decimal digits of a non-negative value into buf (at least 21 bytes); returns the length. */
static size_t u64_digits(char *buf, uint64_t v)
{
	char tmp[21];
	size_t n = 0;
	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (size_t i = 0; i < n; i++)
		buf[i] = tmp[n - 1 - i];
	return n;
}

/* The inner part of a Go-quoted string (without the quotes), as a new string. */
static char *quoted_inner(const char *s)
{
	tfjob__sbuf b = TFJOB__SBUF_INIT;
	tfjob__sbuf_add_quoted(&b, s);
	char *q = tfjob__sbuf_take(&b);
	if (!q)
		return NULL;
	size_t n = strlen(q);
	memmove(q, q + 1, n - 2);
	q[n - 2] = '\0';
	return q;
}

/*
 * Children names and addresses of one type, and its quoted address list. Without a resolver,
 * name i is prefix + i and address i is name i + suffix, written with memcpy: O(bytes), one
 * allocation per array.
 */
/* What comes before and after the index in the child names and addresses of r (NULL when out of memory). */
static void make_affixes(char **prefix, char **suffix, const tfjob_graph *g, const tfjob__rtype *r,
                         const tfjob_render_options *opts)
{
	*prefix = tfjob__strdup_printf("%s-%s-", g->name, r->lower);
	*suffix = opts->cluster_domain
	                  ? tfjob__strdup_printf(".%s.svc.%s:%d", g->namespace, opts->cluster_domain, (int)r->port)
	                  : tfjob__strdup_printf(".%s.svc:%d", g->namespace, (int)r->port);
	for (char *p = *prefix; p && *p; p++)
		if (*p == '/')
			*p = '-';
}

/* A bare graph's type: only the quoted affixes of its addresses. */
static int bare_type(tfjob_graph *g, tfjob__rtype *r, const tfjob_render_options *opts, tfjob_error **err)
{
	char *prefix, *suffix;
	make_affixes(&prefix, &suffix, g, r, opts);
	r->qprefix = prefix ? quoted_inner(prefix) : NULL;
	r->qsuffix = suffix ? quoted_inner(suffix) : NULL;
	free(prefix);
	free(suffix);
	if (!r->qprefix || !r->qsuffix)
		return tfjob__oom(err);
	r->qplen = strlen(r->qprefix);
	r->qslen = strlen(r->qsuffix);
	return 0;
}

/* The texts of one replica type being built: names, addresses (NUL-separated), quoted addresses
 * (comma-separated), and the parts every DNS address shares. */
struct type_texts {
	tfjob__sbuf names, addrs, q;
	bool keep; /* names and addresses are kept (not a light graph) */
	char *prefix, *suffix, *qprefix, *qsuffix;
	size_t plen, slen, qplen, qslen;
};

/* Address i from the caller's address callback. */
static int add_callback_address(struct type_texts *t, const tfjob__rtype *r, size_t i, const tfjob_render_options *opts,
                                tfjob_error **err)
{
	char buf[1024];
	buf[0] = '\0';
	int cb = opts->address_cb(buf, sizeof(buf), r->lower, (int64_t)i, r->port, opts->address_payload);
	if (cb)
		return tfjob__fail(err, cb < 0 ? cb : TFJOB_ERROR, "address callback failed for %s %zu (%s)", r->lower, i,
		                   tfjob_error_code_name(cb));
	buf[sizeof(buf) - 1] = '\0';
	if (!buf[0] || !plain_ascii(buf))
		return tfjob__fail(err, TFJOB_EINVAL, "address callback gave an empty address or one with a "
		                   "space or non-ASCII character for %s %zu", r->lower, i);
	if (t->keep)
		tfjob__sbuf_add(&t->addrs, buf, strlen(buf) + 1);
	tfjob__sbuf_add_quoted(&t->q, buf);
	return 0;
}

/* Address i as a DNS name: prefix + index + suffix. */
static void add_dns_address(struct type_texts *t, const char *digits, size_t dl)
{
	if (t->keep) {
		tfjob__sbuf_add(&t->addrs, t->prefix, t->plen);
		tfjob__sbuf_add(&t->addrs, digits, dl);
		tfjob__sbuf_add(&t->addrs, t->suffix, t->slen + 1);
	}
	tfjob__sbuf_addc(&t->q, '"');
	tfjob__sbuf_add(&t->q, t->qprefix, t->qplen);
	tfjob__sbuf_add(&t->q, digits, dl);
	tfjob__sbuf_add(&t->q, t->qsuffix, t->qslen);
	tfjob__sbuf_addc(&t->q, '"');
}

/* Name and address of replica i, their offsets recorded in r. */
static int add_replica(struct type_texts *t, tfjob__rtype *r, size_t i, const tfjob_render_options *opts,
                       tfjob_error **err)
{
	char digits[24];
	size_t dl = u64_digits(digits, i);
	r->name_off[i] = t->names.len;
	if (t->keep) {
		tfjob__sbuf_add(&t->names, t->prefix, t->plen);
		tfjob__sbuf_add(&t->names, digits, dl);
		tfjob__sbuf_add(&t->names, "", 1);
	}
	if (i)
		tfjob__sbuf_addc(&t->q, ',');
	r->qoff[i] = t->q.len;
	r->addr_off[i] = t->addrs.len;
	if (opts->address_cb)
		return add_callback_address(t, r, i, opts, err);
	add_dns_address(t, digits, dl);
	return 0;
}

static void type_texts_free(struct type_texts *t)
{
	tfjob__sbuf_free(&t->names);
	tfjob__sbuf_free(&t->addrs);
	tfjob__sbuf_free(&t->q);
	free(t->prefix);
	free(t->suffix);
	free(t->qprefix);
	free(t->qsuffix);
}

static int fill_type(tfjob_graph *g, tfjob__rtype *r, const tfjob_render_options *opts, tfjob_error **err)
{
	size_t n = (size_t)r->replicas;
	struct type_texts t = { TFJOB__SBUF_INIT, TFJOB__SBUF_INIT, TFJOB__SBUF_INIT, !g->light, NULL, NULL, NULL, NULL,
		                0, 0, 0, 0 };
	make_affixes(&t.prefix, &t.suffix, g, r, opts);
	t.qprefix = t.prefix ? quoted_inner(t.prefix) : NULL;
	t.qsuffix = t.suffix ? quoted_inner(t.suffix) : NULL;
	r->name_off = calloc(n ? n : 1, sizeof(size_t));
	r->addr_off = calloc(n ? n : 1, sizeof(size_t));
	r->qoff = calloc(n + 1, sizeof(size_t));
	int rc = 0;
	if (!t.prefix || !t.suffix || !t.qprefix || !t.qsuffix || !r->name_off || !r->addr_off || !r->qoff) {
		type_texts_free(&t);
		return tfjob__oom(err);
	}
	t.plen = strlen(t.prefix), t.slen = strlen(t.suffix), t.qplen = strlen(t.qprefix), t.qslen = strlen(t.qsuffix);
	if (t.keep)
		tfjob__sbuf_reserve(&t.names, n * (t.plen + 8));
	if (!opts->address_cb) {
		if (t.keep)
			tfjob__sbuf_reserve(&t.addrs, n * (t.plen + t.slen + 8));
		tfjob__sbuf_reserve(&t.q, n * (t.qplen + t.qslen + 10));
	}
	for (size_t i = 0; i < n && !rc; i++)
		rc = add_replica(&t, r, i, opts, err);
	r->qoff[n] = t.q.len + 1; /* as if followed by a comma */
	if (!rc && (t.names.oom || t.addrs.oom || t.q.oom))
		rc = tfjob__oom(err);
	if (!rc) {
		r->names = tfjob__sbuf_take(&t.names);
		r->addrs = tfjob__sbuf_take(&t.addrs);
		r->quoted = tfjob__sbuf_take(&t.q);
		if (!r->names || !r->addrs || !r->quoted)
			rc = tfjob__oom(err);
	}
	type_texts_free(&t);
	return rc;
}

static int build_cluster(tfjob_graph *g, const tfjob_render_options *opts, tfjob_error **err)
{
	tfjob__sbuf b = TFJOB__SBUF_INIT;
	tfjob__sbuf_addc(&b, '{');
	bool first = true;
	for (size_t t = 0; t < g->ntypes; t++) {
		tfjob__rtype *r = &g->types[t];
		if (opts->exclude_evaluator && !strcmp(r->lower, "evaluator"))
			continue;
		if (!first)
			tfjob__sbuf_addc(&b, ',');
		first = false;
		tfjob__sbuf_add_quoted(&b, r->lower);
		tfjob__sbuf_add(&b, ":[", 2);
		tfjob__sbuf_adds(&b, r->quoted);
		tfjob__sbuf_addc(&b, ']');
	}
	tfjob__sbuf_addc(&b, '}');
	g->cluster_len = b.len;
	g->cluster = tfjob__sbuf_take(&b);
	return g->cluster ? 0 : tfjob__oom(err);
}

static int read_meta(tfjob_graph *g, const tfjob_job *job, const tfjob_render_options *opts, tfjob_error **err)
{
	json_t *meta = json_object_get(job->root, "metadata");
	if (meta && !json_is_object(meta))
		return tfjob__fail_field(err, TFJOB_ESCHEMA, "metadata", "must be an object");
	json_t *name = json_object_get(meta, "name"), *ns = json_object_get(meta, "namespace"),
	       *uid = json_object_get(meta, "uid");
	if (name && !json_is_string(name))
		return tfjob__fail_field(err, TFJOB_ESCHEMA, "metadata.name", "must be a string");
	if (!name || !*json_string_value(name))
		return tfjob__fail_field(err, TFJOB_EINVAL, "metadata.name",
		                         "required to name the children (metadata.generateName is resolved by the "
		                         "API server)");
	if (ns && !json_is_null(ns) && !json_is_string(ns))
		return tfjob__fail_field(err, TFJOB_ESCHEMA, "metadata.namespace", "must be a string");
	if (uid && !json_is_null(uid) && !json_is_string(uid))
		return tfjob__fail_field(err, TFJOB_ESCHEMA, "metadata.uid", "must be a string");
	const char *nss = json_string_value(ns);
	g->name = tfjob__strdup(json_string_value(name));
	g->label_name = tfjob__strdup(json_string_value(name));
	g->namespace = tfjob__strdup(nss && *nss ? nss : opts->default_namespace);
	g->uid = tfjob__strdup(json_is_string(uid) ? json_string_value(uid) : "");
	if (!g->name || !g->label_name || !g->namespace || !g->uid)
		return tfjob__oom(err);
	for (char *p = g->label_name; *p; p++)
		if (*p == '/')
			*p = '-';
	return 0;
}

static int read_types(tfjob_graph *g, const tfjob_job *job, tfjob_error **err)
{
	json_t *spec = json_object_get(job->root, "spec");
	if (!json_is_object(spec))
		return tfjob__fail_field(err, TFJOB_ESCHEMA, "spec", "must be an object");
	json_t *dyn = json_object_get(spec, "enableDynamicWorker");
	if (dyn && !json_is_null(dyn) && !json_is_boolean(dyn))
		return tfjob__fail_field(err, TFJOB_ESCHEMA, "spec.enableDynamicWorker",
		                         "must be a boolean");
	g->dynamic_worker = json_is_true(dyn);
	json_t *specs = json_object_get(spec, "tfReplicaSpecs");
	if (!json_is_object(specs))
		return tfjob__fail_field(err, TFJOB_ESCHEMA, "spec.tfReplicaSpecs",
		                         "must be an object of replica specs");
	size_t n = json_object_size(specs);
	g->types = calloc(n ? n : 1, sizeof(*g->types));
	if (!g->types)
		return tfjob__oom(err);
	const char *key;
	json_t *rspec;
	json_object_foreach(specs, key, rspec) {
		tfjob__rtype *r = &g->types[g->ntypes];
		if (!json_is_object(rspec))
			return field_fail(err, TFJOB_ESCHEMA, key, "", "must be an object");
		r->key = tfjob__strdup(key);
		r->lower = lower_dup(key);
		g->ntypes++;
		if (!r->key || !r->lower)
			return tfjob__oom(err);
		json_t *reps = json_object_get(rspec, "replicas");
		if (!reps || json_is_null(reps))
			r->replicas = 1;
		else if (!json_is_integer(reps))
			return field_fail(err, TFJOB_ESCHEMA, key, ".replicas", "must be an integer");
		else if (json_integer_value(reps) < 0)
			return field_fail(err, TFJOB_ESCHEMA, key, ".replicas", "must not be negative");
		else if (json_integer_value(reps) > TFJOB_MAX_REPLICAS)
			return field_fail(err, TFJOB_ELIMIT, key, ".replicas", "exceeds the limit of 100000 replicas");
		else
			r->replicas = (int64_t)json_integer_value(reps);
		g->total += r->replicas;
		if (g->total > TFJOB_MAX_REPLICAS)
			return tfjob__fail_field(err, TFJOB_ELIMIT, "spec.tfReplicaSpecs",
			                         "more than %d replicas in total", TFJOB_MAX_REPLICAS);
		json_t *rp = json_object_get(rspec, "restartPolicy");
		if (rp && !json_is_null(rp) && !json_is_string(rp))
			return field_fail(err, TFJOB_ESCHEMA, key, ".restartPolicy", "must be a string");
		if (json_is_string(rp) && !(r->restart_policy = tfjob__strdup(json_string_value(rp))))
			return tfjob__oom(err);
		int rc = read_port(&r->port, rspec, key, err);
		if (rc)
			return rc;
	}
	qsort(g->types, g->ntypes, sizeof(*g->types), cmp_rtype);
	for (size_t t = 1; t < g->ntypes; t++)
		if (!strcmp(g->types[t - 1].lower, g->types[t].lower))
			return tfjob__fail_field(err, TFJOB_EINVAL, "spec.tfReplicaSpecs",
			                         "replica types %s and %s differ only in case",
			                         g->types[t - 1].key, g->types[t].key);
	return 0;
}

/* What a graph holds: everything; no names or addresses (light); only the types (bare). */
enum graph_mode { GRAPH_FULL, GRAPH_LIGHT, GRAPH_BARE };

static int graph_build(tfjob_graph **out, const tfjob_job *job, const tfjob_render_options *opts,
                       enum graph_mode mode, tfjob_error **err)
{
	tfjob_graph *g = calloc(1, sizeof(*g));
	if (!g)
		return tfjob__oom(err);
	g->light = mode != GRAPH_FULL;
	g->exclude_evaluator = opts->exclude_evaluator;
	g->compat = opts->compat;
	g->ps = -1;
	bool compat = opts->compat == TFJOB_COMPAT_TRAINING_OPERATOR_1_9;
	int rc = read_meta(g, job, opts, err);
	if (!rc)
		rc = read_types(g, job, err);
	if (rc) {
		tfjob_graph_free(g);
		return rc;
	}
	bool has_master = false;
	int64_t dist = 0;
	for (size_t t = 0; t < g->ntypes; t++) {
		tfjob__rtype *r = &g->types[t];
		if (tfjob__is_chief_or_master(r->key, !compat))
			has_master = r->master_type = true;
		const char *canon = tfjob__canonical_type(r->key);
		if (canon && (!compat || !strcmp(canon, r->key)))
			dist += r->replicas;
		if (!strcmp(r->lower, "ps"))
			g->ps = (long)t;
	}
	g->distributed = dist != 1;
	for (size_t t = 0; t < g->ntypes && !has_master; t++) {
		tfjob__rtype *r = &g->types[t];
		const char *canon = tfjob__canonical_type(r->key);
		if (canon && !strcmp(canon, TFJOB__TYPE_WORKER) && (!compat || !strcmp(r->key, TFJOB__TYPE_WORKER)))
			r->master_type = true; /* index 0 only, see tfjob_graph_is_master() */
	}
	for (size_t t = 0; t < g->ntypes && !rc; t++)
		rc = mode == GRAPH_BARE ? bare_type(g, &g->types[t], opts, err) : fill_type(g, &g->types[t], opts, err);
	if (!rc && mode != GRAPH_BARE)
		rc = build_cluster(g, opts, err);
	if (rc) {
		tfjob_graph_free(g);
		return rc;
	}
	*out = g;
	return 0;
}

int tfjob__graph_build(tfjob_graph **out, const tfjob_job *job, const tfjob_render_options *opts, bool light,
                       tfjob_error **err)
{
	return graph_build(out, job, opts, light ? GRAPH_LIGHT : GRAPH_FULL, err);
}

int tfjob_graph_new(tfjob_graph **out, const tfjob_job *job, const tfjob_render_options *opts, tfjob_error **err)
{
	if (!out || !job)
		return tfjob__fail(err, TFJOB_EINVAL, "out or job is NULL");
	*out = NULL;
	tfjob_render_options ro;
	int rc = tfjob__render_options_resolve(&ro, opts, err);
	return rc ? rc : tfjob__graph_build(out, job, &ro, false, err);
}

/* ---- accessors ---- */

size_t tfjob_graph_type_count(const tfjob_graph *g) { return g ? g->ntypes : 0; }

static const tfjob__rtype *rtype_at(const tfjob_graph *g, size_t t) { return g && t < g->ntypes ? &g->types[t] : NULL; }

const char *tfjob_graph_type(const tfjob_graph *g, size_t t)
{
	const tfjob__rtype *r = rtype_at(g, t);
	return r ? r->key : NULL;
}

int tfjob_graph_find_type(size_t *out, const tfjob_graph *g, const char *type)
{
	if (!out || !g || !type)
		return TFJOB_EINVAL;
	return tfjob__graph_lookup(out, g, type, NULL);
}

int tfjob__graph_lookup(size_t *out, const tfjob_graph *g, const char *type, tfjob_error **err)
{
	for (size_t t = 0; t < g->ntypes; t++)
		if (!strcmp(g->types[t].key, type)) {
			*out = t;
			return 0;
		}
	for (size_t t = 0; t < g->ntypes; t++)
		if (!strcasecmp(g->types[t].key, type)) {
			*out = t;
			return 0;
		}
	return tfjob__fail(err, TFJOB_ENOTFOUND, "TFJob %s has no replica type %s", g->name, type);
}

int tfjob__graph_check(const tfjob_graph *g, size_t t, int64_t index, tfjob_error **err)
{
	const tfjob__rtype *r = rtype_at(g, t);
	if (!r)
		return tfjob__fail(err, TFJOB_EINVAL, "replica type number %zu is out of range", t);
	if (index < 0 || index >= r->replicas)
		return tfjob__fail(err, TFJOB_EINVAL, "index %lld of replica type %s is out of range (%lld replicas)",
		                   (long long)index, r->key, (long long)r->replicas);
	return 0;
}

int64_t tfjob_graph_replicas(const tfjob_graph *g, size_t t)
{
	const tfjob__rtype *r = rtype_at(g, t);
	return r ? r->replicas : -1;
}

int32_t tfjob_graph_port(const tfjob_graph *g, size_t t)
{
	const tfjob__rtype *r = rtype_at(g, t);
	return r ? r->port : -1;
}

const char *tfjob_graph_restart_policy(const tfjob_graph *g, size_t t)
{
	const tfjob__rtype *r = rtype_at(g, t);
	return r ? r->restart_policy : NULL;
}

int64_t tfjob_graph_total_replicas(const tfjob_graph *g) { return g ? g->total : 0; }

int tfjob_graph_is_distributed(const tfjob_graph *g) { return g && g->distributed; }

int tfjob_graph_is_master(const tfjob_graph *g, size_t t, int64_t index)
{
	const tfjob__rtype *r = rtype_at(g, t);
	if (!r || !r->master_type || index < 0 || index >= r->replicas)
		return 0;
	return tfjob__is_chief_or_master(r->key, true) || index == 0;
}

const char *tfjob_graph_child_name(const tfjob_graph *g, size_t t, int64_t index)
{
	return tfjob__graph_check(g, t, index, NULL) ? NULL : TFJOB__RT_NAME(&g->types[t], index);
}

const char *tfjob_graph_address(const tfjob_graph *g, size_t t, int64_t index)
{
	return tfjob__graph_check(g, t, index, NULL) ? NULL : TFJOB__RT_ADDR(&g->types[t], index);
}

/* ---- TF_CONFIG ---- */

static int graph_tf_config(char **out, size_t *out_len, const tfjob_graph *g, const tfjob__rtype *r, int64_t index,
                           tfjob_error **err);

/* The quoted address of replica i of r. */
static void add_item(tfjob__sbuf *b, const tfjob__rtype *r, int64_t i)
{
	if (r->quoted) {
		tfjob__sbuf_add(b, r->quoted + r->qoff[i], r->qoff[i + 1] - r->qoff[i] - 1);
		return;
	}
	char digits[24];
	size_t dl = u64_digits(digits, (uint64_t)i);
	tfjob__sbuf_addc(b, '"');
	tfjob__sbuf_add(b, r->qprefix, r->qplen);
	tfjob__sbuf_add(b, digits, dl);
	tfjob__sbuf_add(b, r->qsuffix, r->qslen);
	tfjob__sbuf_addc(b, '"');
}

/*
 * The quoted addresses of all replicas of a bare type, comma-separated. Items differ only in the
 * index, so one item (with its leading comma) is kept in a scratch buffer, copied out whole, and
 * its digits are counted up in place; it is rebuilt when the index gains a digit.
 */
static void add_bare_items(tfjob__sbuf *b, const tfjob__rtype *r)
{
	size_t n = (size_t)r->replicas;
	char item[512], digits[24];
	size_t dl = u64_digits(digits, n ? n - 1 : 0);
	if (n == 0 || r->qplen + r->qslen + dl + 3 > sizeof(item)) {
		for (size_t i = 0; i < n; i++) {
			if (i)
				tfjob__sbuf_addc(b, ',');
			add_item(b, r, (int64_t)i);
		}
		return;
	}
	if (!tfjob__sbuf_reserve(b, n * (r->qplen + r->qslen + dl + 3)))
		return;
	const size_t at = 2 + r->qplen; /* where the digits start in item */
	char *p = b->p + b->len;
	size_t len = 0;
	dl = 0;
	for (size_t i = 0; i < n; i++) {
		size_t d = at + dl; /* one past the last digit */
		while (d > at && item[d - 1] == '9')
			item[--d] = '0';
		if (d > at) {
			item[d - 1]++;
		} else {
			/* first item, or the index gains a digit: rebuild */
			dl = u64_digits(digits, i);
			item[0] = ',';
			item[1] = '"';
			memcpy(item + 2, r->qprefix, r->qplen);
			memcpy(item + at, digits, dl);
			memcpy(item + at + dl, r->qsuffix, r->qslen);
			item[at + dl + r->qslen] = '"';
			len = at + dl + r->qslen + 1;
		}
		if (i == 0) {
			memcpy(p, item + 1, len - 1);
			p += len - 1;
		} else {
			memcpy(p, item, len);
			p += len;
		}
	}
	*p = '\0';
	b->len = (size_t)(p - b->p);
}

/* The quoted addresses of all replicas of r, comma-separated. */
static void add_items(tfjob__sbuf *b, const tfjob__rtype *r)
{
	if (r->quoted)
		tfjob__sbuf_adds(b, r->quoted);
	else
		add_bare_items(b, r);
}

/* Bytes of the cluster object of a bare graph, about (for one allocation of the output). */
static size_t bare_cluster_size(const tfjob_graph *g)
{
	size_t n = 2;
	for (size_t t = 0; t < g->ntypes; t++) {
		const tfjob__rtype *r = &g->types[t];
		n += strlen(r->lower) + 8 + (size_t)r->replicas * (r->qplen + r->qslen + 3 + 6);
	}
	return n;
}

/* The cluster object of the dense TF_CONFIG: {"chief":[...],...}. */
static void add_cluster(tfjob__sbuf *b, const tfjob_graph *g)
{
	if (g->cluster) {
		tfjob__sbuf_add(b, g->cluster, g->cluster_len);
		return;
	}
	tfjob__sbuf_addc(b, '{');
	bool first = true;
	for (size_t t = 0; t < g->ntypes; t++) {
		const tfjob__rtype *r = &g->types[t];
		if (g->exclude_evaluator && !strcmp(r->lower, "evaluator"))
			continue;
		if (!first)
			tfjob__sbuf_addc(b, ',');
		first = false;
		tfjob__sbuf_add_quoted(b, r->lower);
		tfjob__sbuf_add(b, ":[", 2);
		add_items(b, r);
		tfjob__sbuf_addc(b, ']');
	}
	tfjob__sbuf_addc(b, '}');
}

int tfjob__graph_tf_config_beyond(char **out, const tfjob_graph *g, size_t t, int64_t index, tfjob_error **err)
{
	const tfjob__rtype *r = rtype_at(g, t);
	if (!r || index < r->replicas)
		return tfjob__graph_tf_config(out, NULL, g, t, index, err);
	if (g->distributed && g->dynamic_worker && (!strcmp(r->lower, "ps") || !strcmp(r->lower, "worker")))
		return tfjob__fail(err, TFJOB_ESTATE, "index %lld of replica type %s is beyond its %lld replicas: the sparse "
		                   "TF_CONFIG of enableDynamicWorker has no address for it", (long long)index, r->key,
		                   (long long)r->replicas);
	return graph_tf_config(out, NULL, g, r, index, err);
}

int tfjob__graph_tf_config(char **out, size_t *out_len, const tfjob_graph *g, size_t t, int64_t index,
                           tfjob_error **err)
{
	int rc = tfjob__graph_check(g, t, index, err);
	if (rc)
		return rc;
	return graph_tf_config(out, out_len, g, &g->types[t], index, err);
}

/* TF_CONFIG of a replica of r; the index is only written into "task" (dense form). */
static int graph_tf_config(char **out, size_t *out_len, const tfjob_graph *g, const tfjob__rtype *r, int64_t index,
                           tfjob_error **err)
{
	tfjob__sbuf b = TFJOB__SBUF_INIT;
	if (!g->distributed) {
		/* no TF_CONFIG for a job that is not distributed */
	} else if (g->dynamic_worker) {
		/* v1.9's SparseTFConfig: {"cluster":{"worker":{...},"ps":[...]},"task":{...}} */
		bool is_ps = !strcmp(r->lower, "ps"), is_worker = !strcmp(r->lower, "worker");
		tfjob__sbuf_adds(&b, "{\"cluster\":{\"worker\":{");
		if (is_worker) {
			tfjob__sbuf_addc(&b, '"');
			tfjob__sbuf_add_i64(&b, index);
			tfjob__sbuf_add(&b, "\":", 2);
			add_item(&b, r, index);
		}
		tfjob__sbuf_adds(&b, "},\"ps\":");
		if (is_ps) {
			tfjob__sbuf_addc(&b, '[');
			add_item(&b, r, index);
			tfjob__sbuf_addc(&b, ']');
		} else if (is_worker && g->ps >= 0) {
			tfjob__sbuf_addc(&b, '[');
			add_items(&b, &g->types[g->ps]);
			tfjob__sbuf_addc(&b, ']');
		} else if (is_worker && g->compat == TFJOB_COMPAT_TRAINING_OPERATOR_1_9) {
			tfjob__sbuf_adds(&b, "null"); /* defect 8 */
		} else {
			tfjob__sbuf_adds(&b, "[]");
		}
		tfjob__sbuf_adds(&b, "},\"task\":{\"type\":");
		tfjob__sbuf_add_quoted(&b, r->lower);
		tfjob__sbuf_adds(&b, ",\"index\":");
		tfjob__sbuf_add_i64(&b, index);
		tfjob__sbuf_adds(&b, "}}");
	} else {
		tfjob__sbuf_reserve(&b, (g->cluster ? g->cluster_len : bare_cluster_size(g)) + 96);
		tfjob__sbuf_adds(&b, "{\"cluster\":");
		add_cluster(&b, g);
		tfjob__sbuf_adds(&b, ",\"task\":{\"type\":");
		tfjob__sbuf_add_quoted(&b, r->lower);
		tfjob__sbuf_adds(&b, ",\"index\":");
		tfjob__sbuf_add_i64(&b, index);
		tfjob__sbuf_adds(&b, "},\"environment\":\"cloud\"}");
	}
	size_t len = b.len;
	char *s = tfjob__sbuf_take(&b);
	if (!s)
		return tfjob__oom(err);
	*out = s;
	if (out_len)
		*out_len = len;
	return 0;
}

int tfjob_graph_tf_config(char **out, const tfjob_graph *g, size_t t, int64_t index, tfjob_error **err)
{
	if (!out || !g)
		return tfjob__fail(err, TFJOB_EINVAL, "out or graph is NULL");
	*out = NULL;
	return tfjob__graph_tf_config(out, NULL, g, t, index, err);
}

int tfjob_tf_config(char **out, const tfjob_job *job, const char *type, int64_t index,
                    const tfjob_render_options *opts, tfjob_error **err)
{
	if (!out || !job || !type)
		return tfjob__fail(err, TFJOB_EINVAL, "out, job or type is NULL");
	*out = NULL;
	tfjob_graph *g = NULL;
	tfjob_render_options ro;
	int rc = tfjob__render_options_resolve(&ro, opts, err);
	/* Without an address callback the addresses are index + fixed parts: nothing per replica is built
	 * before the output is written (a callback's errors must come at graph time, as for all replicas). */
	if (!rc)
		rc = graph_build(&g, job, &ro, ro.address_cb ? GRAPH_LIGHT : GRAPH_BARE, err);
	if (rc)
		return rc;
	size_t t = 0;
	rc = tfjob__graph_lookup(&t, g, type, err);
	/* v1.9 gives TF_CONFIG to the pods it creates at or beyond replicas (defect 7): so does compat. */
	bool beyond = !rc && ro.compat == TFJOB_COMPAT_TRAINING_OPERATOR_1_9 && index >= 0 &&
	              index >= tfjob_graph_replicas(g, t);
	if (beyond)
		rc = tfjob__graph_tf_config_beyond(out, g, t, index, err);
	else if (!rc)
		rc = tfjob__graph_tf_config(out, NULL, g, t, index, err);
	tfjob_graph_free(g);
	return rc;
}
