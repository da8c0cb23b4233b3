/*
 * The controller's object stores: TFJobs by key, Pods and Services by key and by owner
 * ("uid:UID" for children with a controller reference to a TFJob, "orphan:NS/JOB" for children
 * with only the job-name label, candidates for adoption). Stored objects are never modified, so
 * snapshots share them by reference (jansson's reference counts are atomic).
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/internal.h"


void tfjob__store_init(tfjob__store *s, int indexed)
{
	memset(s, 0, sizeof(*s));
	s->indexed = indexed;
}

static void decref(void *v)
{
	json_decref(v);
}

static void free_index(void *v)
{
	tfjob__map *m = v;
	tfjob__map_clear(m, NULL);
	free(m);
}

void tfjob__store_clear(tfjob__store *s)
{
	tfjob__map_clear(&s->owner, free_index);
	tfjob__map_clear(&s->objs, decref);
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

const char *tfjob__owner_key(char *buf, size_t size, json_t *obj)
{
	json_t *md = json_object_get(obj, "metadata");
	json_t *refs = json_object_get(md, "ownerReferences");
	size_t i;
	json_t *r;
	json_array_foreach(refs, i, r) {
		if (json_is_true(json_object_get(r, "controller"))) {
			const char *kind = json_string_value(json_object_get(r, "kind"));
			const char *uid = json_string_value(json_object_get(r, "uid"));
			if (kind && uid && !strcmp(kind, "TFJob")) {
				snprintf(buf, size, "uid:%s", uid);
				return buf;
			}
			return NULL; /* controlled by something else */
		}
	}
	const char *job = json_string_value(json_object_get(json_object_get(md, "labels"), TFJOB_LABEL_JOB_NAME));
	const char *ns = json_string_value(json_object_get(md, "namespace"));
	if (!job)
		return NULL;
	snprintf(buf, size, "orphan:%s/%s", ns ? ns : "", job);
	return buf;
}

static int64_t rv_of(json_t *obj, int *ok)
{
	const char *rv = json_string_value(json_object_get(json_object_get(obj, "metadata"), "resourceVersion"));
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

static void index_del(tfjob__store *s, json_t *obj, const char *key)
{
	char buf[512];
	const char *ok = tfjob__owner_key(buf, sizeof(buf), obj);
	if (!ok)
		return;
	tfjob__map *m = tfjob__map_get(&s->owner, ok);
	if (m) {
		tfjob__map_del(m, key);
		if (!m->len)
			free_index(tfjob__map_del(&s->owner, ok));
	}
}

static int index_add(tfjob__store *s, json_t *obj, const char *key)
{
	char buf[512];
	const char *ok = tfjob__owner_key(buf, sizeof(buf), obj);
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
	return tfjob__map_put(m, key, obj, NULL) ? TFJOB_ENOMEM : 0;
}

int tfjob__store_put(tfjob__store *s, json_t *obj)
{
	char *key = tfjob__object_key(obj);
	if (!key) {
		json_decref(obj);
		return TFJOB_EINVAL;
	}
	json_t *old = tfjob__map_get(&s->objs, key);
	if (old) {
		int ok1, ok2;
		int64_t a = rv_of(old, &ok1), b = rv_of(obj, &ok2);
		if (ok1 && ok2 && a > b) { /* we already hold a newer version (our own write) */
			free(key);
			json_decref(obj);
			return 1;
		}
		if (s->indexed)
			index_del(s, old, key);
	}
	void *replaced = NULL;
	if (tfjob__map_put(&s->objs, key, obj, &replaced)) {
		free(key);
		json_decref(obj);
		return TFJOB_ENOMEM;
	}
	json_decref(replaced);
	int rc = s->indexed ? index_add(s, obj, key) : 0;
	free(key);
	return rc;
}

json_t *tfjob__store_del(tfjob__store *s, json_t *obj)
{
	char *key = tfjob__object_key(obj);
	if (!key)
		return NULL;
	json_t *old = tfjob__map_get(&s->objs, key);
	if (old && s->indexed)
		index_del(s, old, key);
	old = tfjob__map_del(&s->objs, key);
	free(key);
	return old;
}

json_t *tfjob__store_children(tfjob__store *s, const char *owner_key)
{
	json_t *arr = json_array();
	tfjob__map *m = tfjob__map_get(&s->owner, owner_key);
	if (!arr || !m)
		return arr;
	size_t b = 0;
	for (tfjob__map_node *n = tfjob__map_next(m, &b, NULL); n; n = tfjob__map_next(m, &b, n))
		json_array_append(arr, n->val);
	return arr;
}
