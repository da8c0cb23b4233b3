/*
 * The controller's object stores. TFJobs and PodGroups are kept whole (the planner reads a job's
 * spec; both are small and few). Pods and Services are kept compact (tfjob__child): the fields
 * decisions read, not the object, so a cached pod costs a few hundred bytes whatever the size of
 * its job (its spec, with the whole TF_CONFIG, is not kept). Children are indexed by owner
 * ("uid:UID" for children with a controller reference to a TFJob, "orphan:NS/JOB" for children
 * with only the job-name label, candidates for adoption). Stored entries are never modified, so
 * snapshots share them by reference.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/parts.h"
#include "core/job.h"
#include "parse/jscan.h"

/* Heap estimates (for the cache-size metrics): malloc's own header per allocation, a map
   entry (node and key copy). */
#define ALLOC_OVERHEAD 16
static size_t map_entry_bytes(const char *key)
{
	return sizeof(tfjob__map_node) + sizeof(void *) + strlen(key) + 1 + 2 * ALLOC_OVERHEAD;
}

/* Rough heap size of a jansson value (for cache accounting). */
static size_t json_bytes(json_t *v)
{
	size_t n = 48 + ALLOC_OVERHEAD;
	if (json_is_object(v)) {
		const char *k;
		json_t *m;
		json_object_foreach(v, k, m)
			n += 48 + strlen(k) + json_bytes(m);
	} else if (json_is_array(v)) {
		size_t i;
		json_t *m;
		json_array_foreach(v, i, m)
			n += sizeof(void *) + json_bytes(m);
	} else if (json_is_string(v)) {
		n += json_string_length(v) + 1;
	}
	return n;
}

/* ---- whole objects, as compact JSON text ---- */

/* A stored object: its compact JSON text, then its resourceVersion (compared without parsing). */
typedef struct tfjob__stored {
	const char *rv; /* NULL when it has none */
	char text[];
} stored_obj;

void tfjob__store_init(tfjob__store *s)
{
	memset(s, 0, sizeof(*s));
}

void tfjob__store_clear(tfjob__store *s)
{
	tfjob__map_clear(&s->objs, free);
	s->bytes = 0;
}

char *tfjob__object_key(json_t *obj)
{
	json_t *md = json_object_get(obj, "metadata");
	const char *name = json_string_value(json_object_get(md, "name"));
	const char *ns = json_string_value(json_object_get(md, "namespace"));
	if (!name)
		return NULL;
	return tfjob__strdup_printf("%s/%s", ns ? ns : "", name);
}

/* A resourceVersion as a number (*ok = 0 when it is not one). */
static int64_t rv_number(const char *rv, int *ok)
{
	*ok = 0;
	if (!rv || !*rv)
		return 0;
	char *end;
	long long v = strtoll(rv, &end, 10);
	if (*end)
		return 0;
	*ok = 1;
	return v;
}

/* 1 when `held` is a newer version than `incoming` (our own write, seen before the watch's). */
static int newer(const char *held, const char *incoming)
{
	int ok1, ok2;
	int64_t a = rv_number(held, &ok1), b = rv_number(incoming, &ok2);
	return ok1 && ok2 && a > b;
}

static const char *rv_of(json_t *obj)
{
	return json_string_value(json_object_get(json_object_get(obj, "metadata"), "resourceVersion"));
}

/* A stored object of the text a[0..an) followed by b[0..bn), and rv (may be NULL); NULL when
   out of memory. */
static stored_obj *stored_of(const char *a, size_t an, const char *b, size_t bn, const char *rv)
{
	size_t rn = rv ? strlen(rv) + 1 : 0;
	stored_obj *so = malloc(sizeof(*so) + an + bn + 1 + rn);
	if (so) {
		memcpy(so->text, a, an);
		if (bn) /* b may be NULL then */
			memcpy(so->text + an, b, bn);
		so->text[an + bn] = '\0';
		so->rv = rv ? memcpy(so->text + an + bn + 1, rv, rn) : NULL;
	}
	return so;
}

/* obj as a stored object; NULL when out of memory. */
static stored_obj *stored_new(json_t *obj)
{
	char *text = json_dumps(obj, JSON_COMPACT);
	stored_obj *so = text ? stored_of(text, strlen(text), NULL, 0, rv_of(obj)) : NULL;
	free(text);
	return so;
}

static size_t stored_bytes(const stored_obj *so)
{
	return sizeof(*so) + strlen(so->text) + 1 + (so->rv ? strlen(so->rv) + 1 : 0) + ALLOC_OVERHEAD;
}

int tfjob__store_put_stored(tfjob__store *s, char *key, stored_obj *so)
{
	stored_obj *old = tfjob__map_get(&s->objs, key);
	if (old && newer(old->rv, so->rv)) {
		free(key);
		free(so);
		return 1;
	}
	void *replaced = NULL;
	int rc = tfjob__map_put(&s->objs, key, so, &replaced) ? TFJOB_ENOMEM : 0;
	if (rc) {
		free(so);
	} else {
		s->bytes += stored_bytes(so) + (replaced ? 0 : map_entry_bytes(key));
		s->bytes -= replaced ? stored_bytes(replaced) : 0;
	}
	free(replaced);
	free(key);
	return rc;
}

int tfjob__store_put(tfjob__store *s, json_t *obj)
{
	char *key = tfjob__object_key(obj);
	if (!key) {
		json_decref(obj);
		return TFJOB_EINVAL;
	}
	stored_obj *so = stored_new(obj);
	json_decref(obj);
	if (!so) {
		free(key);
		return TFJOB_ENOMEM;
	}
	return tfjob__store_put_stored(s, key, so);
}

tfjob__stored *tfjob__stored_from_text(const char *text, char **key)
{
	const char *md, *md_end, *mf = NULL, *mf_end = NULL;
	*key = NULL;
	size_t n = strlen(text);
	if (!tfjob__jscan_member(text, "\"metadata\"", &md, &md_end) || *md != '{' ||
	    !tfjob__jscan_valid(text, n, TFJOB__JSON_MAX_DEPTH))
		return NULL;
	char *name = NULL, *ns = NULL, *rv = NULL;
	stored_obj *so = NULL;
	/* a field only a parse can read (escapes) leaves the whole object to the parse */
	if (!tfjob__jscan_string_member(md, "\"name\"", &name) && name &&
	    !tfjob__jscan_string_member(md, "\"namespace\"", &ns) &&
	    !tfjob__jscan_string_member(md, "\"resourceVersion\"", &rv) &&
	    (*key = tfjob__strdup_printf("%s/%s", ns ? ns : "", name))) {
		if (!tfjob__jscan_member_span(md, "\"managedFields\"", &mf, &mf_end))
			mf = mf_end = text + n;
		/* the text without managedFields: what comes before it, then what comes after */
		so = stored_of(text, (size_t)(mf - text), mf_end, n - (size_t)(mf_end - text), rv);
		if (!so) {
			free(*key);
			*key = NULL;
		}
	}
	free(name);
	free(ns);
	free(rv);
	return so;
}

const char *tfjob__stored_rv(const tfjob__stored *so)
{
	return so->rv;
}

json_t *tfjob__store_get(const tfjob__store *s, const char *key)
{
	const stored_obj *so = tfjob__map_get(&s->objs, key);
	return so ? json_loads(so->text, 0, NULL) : NULL;
}

char *tfjob__store_text(const tfjob__store *s, const char *key)
{
	const stored_obj *so = tfjob__map_get(&s->objs, key);
	return so ? strdup(so->text) : NULL;
}

int tfjob__store_del(tfjob__store *s, json_t *obj, json_t **removed)
{
	char *key = tfjob__object_key(obj);
	stored_obj *old = key ? tfjob__map_del(&s->objs, key) : NULL;
	if (old)
		s->bytes -= stored_bytes(old) + map_entry_bytes(key);
	if (removed)
		*removed = old ? json_loads(old->text, 0, NULL) : NULL;
	free(key);
	free(old);
	return old != NULL;
}

/* ---- compact children ---- */

/*
 * Parse text with each of its n (1 or 2) ranges cut[i] = [start, end), not overlapping, replaced
 * by null, from one copy (cut is put in text order); when one of them was metadata.managedFields,
 * that member goes too. NULL when not JSON or out of memory.
 */
static json_t *loads_without(const char *text, const char *cut[][2], int n, int managed_fields_cut)
{
	if (n == 2 && cut[1][0] < cut[0][0]) {
		const char *first[2] = { cut[1][0], cut[1][1] };
		cut[1][0] = cut[0][0], cut[1][1] = cut[0][1];
		cut[0][0] = first[0], cut[0][1] = first[1];
	}
	size_t len = strlen(text), need = len + 1;
	for (int i = 0; i < n; i++)
		need = need - (size_t)(cut[i][1] - cut[i][0]) + 4;
	char *lean = malloc(need), *o = lean;
	if (!lean)
		return NULL;
	const char *from = text;
	for (int i = 0; i < n; i++) {
		memcpy(o, from, (size_t)(cut[i][0] - from));
		o += cut[i][0] - from;
		memcpy(o, "null", 4);
		o += 4;
		from = cut[i][1];
	}
	memcpy(o, from, (size_t)(text + len - from) + 1);
	json_t *obj = json_loads(lean, 0, NULL);
	free(lean);
	if (managed_fields_cut)
		json_object_del(json_object_get(obj, "metadata"), "managedFields");
	return obj;
}

/* Where metadata.managedFields's value starts and ends; 0 when there is none. */
static int find_managed_fields(const char *text, const char **start, const char **end)
{
	const char *md, *md_end;
	return tfjob__jscan_member(text, "\"metadata\"", &md, &md_end) && tfjob__jscan_member(md, "\"managedFields\"", start, end);
}

json_t *tfjob__object_loads(const char *text)
{
	const char *cut[1][2];
	if (!find_managed_fields(text, &cut[0][0], &cut[0][1]))
		return json_loads(text, 0, NULL);
	return loads_without(text, cut, 1, 1);
}

/* Parse text[0..len) (copied: the parsers want a terminated string). */
static json_t *loads_part(const char *text, size_t len, int lean)
{
	char *copy = malloc(len + 1);
	if (!copy)
		return NULL;
	memcpy(copy, text, len);
	copy[len] = '\0';
	json_t *v = lean ? tfjob__child_loads(copy) : tfjob__object_loads(copy);
	free(copy);
	return v;
}

/* The items of a List's "items" array starting at p ('['), one by one; past the array or NULL. */
static const char *each_item(const char *p, int lean, int (*on_item)(json_t *item, void *payload), void *payload)
{
	p = tfjob__jscan_ws(p + 1);
	if (*p == ']')
		return p + 1;
	for (;;) {
		const char *end = tfjob__jscan_value(p);
		json_t *item = end ? loads_part(p, (size_t)(end - p), lean) : NULL;
		if (!item)
			return NULL;
		int rc = on_item(item, payload);
		json_decref(item);
		if (rc)
			return NULL;
		p = tfjob__jscan_ws(end);
		if (*p == ']')
			return p + 1;
		if (*p++ != ',')
			return NULL;
		p = tfjob__jscan_ws(p);
	}
}

int tfjob__list_parse(const char *text, int lean, json_t **meta, int (*on_item)(json_t *item, void *payload),
                      void *payload)
{
	*meta = NULL;
	const char *p = tfjob__jscan_ws(text);
	if (*p++ != '{')
		return TFJOB_EPARSE;
	p = tfjob__jscan_ws(p);
	while (*p != '}') {
		const char *key = p;
		if (*p != '"' || !(p = tfjob__jscan_string(p)))
			break;
		size_t klen = (size_t)(p - key);
		p = tfjob__jscan_ws(p);
		if (*p++ != ':')
			break;
		const char *v = tfjob__jscan_ws(p), *end;
		if (klen == 7 && !memcmp(key, "\"items\"", 7) && *v == '[') {
			end = each_item(v, lean, on_item, payload);
		} else {
			end = tfjob__jscan_value(v);
			if (end && klen == 10 && !memcmp(key, "\"metadata\"", 10)) {
				json_decref(*meta);
				*meta = loads_part(v, (size_t)(end - v), 0);
			}
		}
		if (!end)
			break;
		p = tfjob__jscan_ws(end);
		if (*p == ',')
			p = tfjob__jscan_ws(p + 1);
		else if (*p != '}')
			break;
	}
	if (*p == '}')
		return 0;
	json_decref(*meta);
	*meta = NULL;
	return TFJOB_EPARSE;
}

json_t *tfjob__child_loads(const char *text)
{
	const char *cut[2][2];
	if (!tfjob__jscan_member(text, "\"spec\"", &cut[0][0], &cut[0][1]) || cut[0][1] - cut[0][0] < 64)
		return tfjob__object_loads(text);
	/* one copy without either: the spec (a pod's holds the whole TF_CONFIG) and managedFields */
	int managed = find_managed_fields(text, &cut[1][0], &cut[1][1]);
	return loads_without(text, cut, 1 + managed, managed);
}

/* A new object with only the listed members of obj (shared, not copied); NULL when obj is not an object. */
static json_t *pick(json_t *obj, const char *const *keys)
{
	if (!json_is_object(obj))
		return NULL;
	json_t *out = json_object();
	for (; out && *keys; keys++) {
		json_t *v = json_object_get(obj, *keys);
		if (v && json_object_set(out, *keys, v)) {
			json_decref(out);
			return NULL;
		}
	}
	return out;
}

static int set_picked(json_t *dst, const char *key, json_t *picked)
{
	return picked ? json_object_set_new(dst, key, picked) : 0;
}

/* Container statuses with what RecordAbnormalPods reads: name, terminated exitCode/reason/message,
   waiting reason/message. Entries that are not objects are kept as they are. */
static json_t *prune_container_statuses(json_t *arr)
{
	static const char *const term_keys[] = { "exitCode", "reason", "message", NULL };
	static const char *const wait_keys[] = { "reason", "message", NULL };
	static const char *const name_key[] = { "name", NULL };
	json_t *out = json_array();
	size_t i;
	json_t *st;
	json_array_foreach(arr, i, st) {
		if (!out)
			break;
		json_t *p = json_is_object(st) ? pick(st, name_key) : json_incref(st);
		json_t *state = json_object_get(st, "state");
		if (p && json_is_object(st) && json_is_object(state)) {
			json_t *ps = json_object();
			int bad = !ps || set_picked(ps, "terminated", pick(json_object_get(state, "terminated"), term_keys)) ||
			          set_picked(ps, "waiting", pick(json_object_get(state, "waiting"), wait_keys)) ||
			          json_object_set_new(p, "state", ps);
			if (bad) {
				json_decref(p);
				p = NULL;
			}
		}
		if (!p || json_array_append_new(out, p)) {
			json_decref(out);
			out = NULL;
		}
	}
	return out;
}

static json_t *prune_conditions(json_t *arr)
{
	static const char *const keys[] = { "status", "reason", "message", "lastTransitionTime", NULL };
	json_t *out = json_array();
	size_t i;
	json_t *c;
	json_array_foreach(arr, i, c) {
		json_t *p = json_is_object(c) ? pick(c, keys) : json_incref(c);
		if (!out || !p || json_array_append_new(out, p)) {
			json_decref(p);
			json_decref(out);
			return NULL;
		}
	}
	return out;
}

/* {"status": ...} with the parts of a pod's status the planner's RecordAbnormalPods reads. */
static json_t *abnormal_view(json_t *obj)
{
	json_t *status = tfjob__obj(obj, "status"), *view = json_object(), *ps = json_object();
	json_t *cs = tfjob__arr(status, "containerStatuses"), *ics = tfjob__arr(status, "initContainerStatuses");
	json_t *conds = tfjob__arr(status, "conditions");
	int bad = !view || !ps || (cs && json_object_set_new(ps, "containerStatuses", prune_container_statuses(cs))) ||
	          (ics && json_object_set_new(ps, "initContainerStatuses", prune_container_statuses(ics))) ||
	          (conds && json_object_set_new(ps, "conditions", prune_conditions(conds))) ||
	          json_object_set(view, "status", ps);
	json_decref(ps);
	if (bad) {
		json_decref(view);
		return NULL;
	}
	return view;
}

static int active(const tfjob__summary *s)
{
	return s->phase_kind != TFJOB__PHASE_SUCCEEDED && s->phase_kind != TFJOB__PHASE_FAILED && !s->deleting;
}

enum { F_KEY, F_NS, F_UID, F_RV, F_OPERATOR, F_REFS, F_CKIND, F_CNAME, F_CUID, F_NAME, F_JOB, F_RTYPE, F_RINDEX,
	   F_PHASE, F_COUNT };

/* The strings a child keeps, from the object and its summary; *controlled when a controller
 * reference was found. */
static void child_sources(const char *src[F_COUNT], int *controlled, json_t *md, const tfjob__summary *sum)
{
	src[F_NS] = tfjob__str(md, "namespace");
	src[F_UID] = tfjob__str(md, "uid");
	src[F_RV] = tfjob__str(md, "resourceVersion");
	src[F_OPERATOR] = tfjob__str(tfjob__obj(md, "labels"), TFJOB_LABEL_OPERATOR);
	src[F_NAME] = sum->name;
	src[F_JOB] = sum->job_name;
	src[F_RTYPE] = sum->rtype;
	src[F_RINDEX] = sum->rindex;
	src[F_PHASE] = sum->phase;
	*controlled = 0;
	size_t i;
	json_t *r;
	json_array_foreach(tfjob__arr(md, "ownerReferences"), i, r) {
		if (json_is_true(json_object_get(r, "controller"))) {
			*controlled = 1;
			src[F_CKIND] = tfjob__str(r, "kind");
			src[F_CNAME] = tfjob__str(r, "name");
			src[F_CUID] = tfjob__str(r, "uid");
			break;
		}
	}
}

/* Copy the strings into the child's own text, one block after the struct; dst points into it. */
static void copy_sources(tfjob__child *ch, const char *src[F_COUNT], const char *dst[F_COUNT])
{
	char *p = ch->text;
	for (int f = 0; f < F_COUNT; f++) {
		dst[f] = NULL;
		if (src[f]) {
			size_t n = strlen(src[f]) + 1;
			memcpy(p, src[f], n);
			dst[f] = p;
			p += n;
		}
	}
}

/* Point the child's fields at its text. */
static void set_fields(tfjob__child *ch, const char *dst[F_COUNT], int controlled)
{
	ch->sum.name = dst[F_NAME];
	ch->sum.job_name = dst[F_JOB];
	ch->sum.rtype = dst[F_RTYPE];
	ch->sum.rindex = dst[F_RINDEX];
	ch->sum.phase = dst[F_PHASE];
	ch->sum.uid = dst[F_UID];
	ch->sum.operator_name = dst[F_OPERATOR];
	ch->sum.owner_refs = dst[F_REFS];
	ch->sum.controller_uid = controlled ? (dst[F_CUID] ? dst[F_CUID] : "") : NULL;
	ch->key = dst[F_KEY];
	ch->ns = dst[F_NS];
	ch->uid = dst[F_UID];
	ch->rv = dst[F_RV];
	ch->ctrl_kind = dst[F_CKIND];
	ch->ctrl_name = dst[F_CNAME];
	ch->ctrl_uid = dst[F_CUID];
	ch->controlled = controlled;
}

int tfjob__child_new(tfjob__child **out, json_t *obj)
{
	*out = NULL;
	tfjob__summary sum;
	tfjob__summarize(&sum, obj);
	if (!sum.name)
		return TFJOB_EINVAL;
	json_t *md = json_object_get(obj, "metadata"), *refs = tfjob__arr(md, "ownerReferences");
	const char *src[F_COUNT] = { 0 }, *dst[F_COUNT];
	int controlled;
	child_sources(src, &controlled, md, &sum);
	char *refs_text = json_array_size(refs) ? json_dumps(refs, JSON_COMPACT) : NULL;
	char *key = tfjob__strdup_printf("%s/%s", src[F_NS] ? src[F_NS] : "", sum.name);
	src[F_REFS] = refs_text;
	src[F_KEY] = key;
	json_t *view = sum.maybe_abnormal && active(&sum) ? abnormal_view(obj) : NULL;
	size_t need = 0;
	for (int f = 0; f < F_COUNT; f++)
		need += src[f] ? strlen(src[f]) + 1 : 0;
	tfjob__child *ch = (!key || (json_array_size(refs) && !refs_text) || (sum.maybe_abnormal && active(&sum) && !view))
	                   ? NULL : malloc(sizeof(*ch) + need);
	if (ch)
		copy_sources(ch, src, dst);
	free(refs_text);
	free(key);
	if (!ch) {
		json_decref(view);
		return TFJOB_ENOMEM;
	}
	atomic_init(&ch->refs, 1);
	ch->sum = sum;
	ch->sum.obj = view;
	set_fields(ch, dst, controlled);
	/* the child, its view, and its entries in the key and owner maps */
	ch->bytes = sizeof(*ch) + need + ALLOC_OVERHEAD + (view ? json_bytes(view) : 0) + 2 * map_entry_bytes(ch->key);
	*out = ch;
	return 0;
}

tfjob__child *tfjob__child_ref(tfjob__child *ch)
{
	if (ch)
		atomic_fetch_add(&ch->refs, 1);
	return ch;
}

void tfjob__child_unref(tfjob__child *ch)
{
	if (!ch || atomic_fetch_sub(&ch->refs, 1) != 1)
		return;
	json_decref(ch->sum.obj);
	free(ch);
}

const char *tfjob__child_owner_key(char *buf, size_t size, const tfjob__child *ch)
{
	if (ch->controlled) {
		if (!ch->ctrl_kind || !ch->ctrl_uid || strcmp(ch->ctrl_kind, "TFJob"))
			return NULL; /* controlled by something else */
		return tfjob__fits(snprintf(buf, size, "uid:%s", ch->ctrl_uid), size) ? buf : NULL;
	}
	if (!ch->sum.job_name)
		return NULL;
	int n = snprintf(buf, size, "orphan:%s/%s", ch->ns ? ch->ns : "", ch->sum.job_name);
	return tfjob__fits(n, size) ? buf : NULL;
}

void tfjob__child_store_init(tfjob__child_store *s)
{
	memset(s, 0, sizeof(*s));
}

static void free_index(void *v)
{
	tfjob__map *m = v;
	tfjob__map_clear(m, NULL);
	free(m);
}

static void unref(void *v)
{
	tfjob__child_unref(v);
}

void tfjob__child_store_clear(tfjob__child_store *s)
{
	tfjob__map_clear(&s->owner, free_index);
	tfjob__map_clear(&s->objs, unref);
	s->bytes = 0;
}

static void index_del(tfjob__child_store *s, const tfjob__child *ch)
{
	char buf[TFJOB__KEY_MAX];
	const char *ok = tfjob__child_owner_key(buf, sizeof(buf), ch);
	tfjob__map *m = ok ? tfjob__map_get(&s->owner, ok) : NULL;
	if (m) {
		tfjob__map_del(m, ch->key);
		if (!m->len)
			free_index(tfjob__map_del(&s->owner, ok));
	}
}

static int index_add(tfjob__child_store *s, tfjob__child *ch)
{
	char buf[TFJOB__KEY_MAX];
	const char *ok = tfjob__child_owner_key(buf, sizeof(buf), ch);
	if (!ok)
		return 0;
	tfjob__map *m = tfjob__map_get(&s->owner, ok);
	if (!m) {
		m = calloc(1, sizeof(*m));
		if (!m || tfjob__map_put(&s->owner, ok, m, NULL)) {
			free(m);
			return TFJOB_ENOMEM;
		}
	}
	return tfjob__map_put(m, ch->key, ch, NULL) ? TFJOB_ENOMEM : 0;
}

int tfjob__child_store_put(tfjob__child_store *s, tfjob__child *ch)
{
	tfjob__child *old = tfjob__map_get(&s->objs, ch->key);
	if (old && newer(old->rv, ch->rv)) {
		tfjob__child_unref(ch);
		return 1;
	}
	void *replaced = NULL;
	if (tfjob__map_put(&s->objs, ch->key, ch, &replaced)) {
		tfjob__child_unref(ch);
		return TFJOB_ENOMEM;
	}
	if (old) {
		index_del(s, old);
		s->bytes -= old->bytes;
		tfjob__child_unref(old);
	}
	s->bytes += ch->bytes;
	return index_add(s, ch);
}

tfjob__child *tfjob__child_store_del(tfjob__child_store *s, const char *key)
{
	tfjob__child *old = tfjob__map_get(&s->objs, key);
	if (!old)
		return NULL;
	index_del(s, old);
	tfjob__map_del(&s->objs, key);
	s->bytes -= old->bytes;
	return old;
}

size_t tfjob__child_store_children(tfjob__child_store *s, const char *owner_key, tfjob__child ***out)
{
	tfjob__map *m = tfjob__map_get(&s->owner, owner_key);
	size_t n = m ? m->len : 0, i = 0;
	*out = malloc((n ? n : 1) * sizeof(**out));
	if (!*out)
		return 0;
	size_t b = 0;
	for (tfjob__map_node *node = m ? tfjob__map_next(m, &b, NULL) : NULL; node; node = tfjob__map_next(m, &b, node))
		(*out)[i++] = tfjob__child_ref(node->val);
	return i;
}

void tfjob__children_free(tfjob__child **kids, size_t n)
{
	for (size_t i = 0; kids && i < n; i++)
		tfjob__child_unref(kids[i]);
	free(kids);
}
