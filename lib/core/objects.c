/*
 * Lists of observed Kubernetes objects, parsed once and reused by the planner.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdlib.h>
#include <string.h>

#include "parse/doc.h"
#include "core/job.h"
#include "core/objects.h"

static int check_items(json_t *items, const char *what, tfjob_error **err)
{
	size_t i;
	json_t *item;
	json_array_foreach(items, i, item) {
		if (!json_is_object(item) || (json_object_get(item, "metadata") && !tfjob__obj(item, "metadata")))
			return tfjob__fail(err, TFJOB_ESCHEMA, "%s[%zu]: must be an object with an object metadata", what, i);
	}
	return 0;
}

/* ---- summaries ---- */

/* strconv.Atoi: optional sign and decimal digits, within int range. */
static bool parse_index(int64_t *out, const char *s)
{
	if (!s || !*s)
		return false;
	const char *p = s;
	bool neg = false;
	if (*p == '+' || *p == '-')
		neg = *p++ == '-';
	if (!*p)
		return false;
	int64_t v = 0;
	for (; *p; p++) {
		if (*p < '0' || *p > '9')
			return false;
		v = v * 10 + (*p - '0');
		if (v > INT32_MAX)
			return false;
	}
	*out = neg ? -v : v;
	return true;
}

static unsigned char phase_kind(const char *phase)
{
	if (!phase)
		return TFJOB__PHASE_OTHER;
	if (!strcmp(phase, "Running"))
		return TFJOB__PHASE_RUNNING;
	if (!strcmp(phase, "Succeeded"))
		return TFJOB__PHASE_SUCCEEDED;
	if (!strcmp(phase, "Failed"))
		return TFJOB__PHASE_FAILED;
	return TFJOB__PHASE_OTHER;
}

/* The `tensorflow` container's terminated exit code (the last such status wins). */
static void summarize_exit_code(tfjob__summary *s, json_t *statuses)
{
	s->exit_code = TFJOB__NO_EXIT_CODE;
	s->exit_found = false;
	size_t i;
	json_t *st;
	json_array_foreach(statuses, i, st) {
		const char *n = tfjob__str(st, "name");
		json_t *term = tfjob__obj(tfjob__obj(st, "state"), "terminated");
		if (n && !strcmp(n, TFJOB__CONTAINER_NAME) && term) {
			int64_t v = 0;
			tfjob__int(&v, term, "exitCode");
			s->exit_code = v;
			s->exit_found = true;
		}
	}
}

/* Sum of restartCount, wrapping like two's complement (the planner adds these up the same way). */
static uint64_t restart_sum(json_t *statuses)
{
	uint64_t sum = 0;
	size_t i;
	json_t *st;
	json_array_foreach(statuses, i, st) {
		int64_t n = 0;
		tfjob__int(&n, st, "restartCount");
		sum += (uint64_t)n;
	}
	return sum;
}

/* Whether a container status could give RecordAbnormalPods an event (a terminated state or a waiting one). */
static bool container_may_report(json_t *statuses)
{
	size_t i;
	json_t *st;
	json_array_foreach(statuses, i, st) {
		json_t *state = tfjob__obj(st, "state");
		if (tfjob__obj(state, "terminated") || tfjob__obj(state, "waiting"))
			return true;
	}
	return false;
}

/*
 * A superset of the pods RecordAbnormalPods reports on (the planner repeats its exact rules on
 * these): container statuses with a terminated or waiting state, or, without any container
 * statuses, pod conditions.
 */
static bool may_be_abnormal(json_t *status)
{
	json_t *cs = tfjob__arr(status, "containerStatuses"), *ics = tfjob__arr(status, "initContainerStatuses");
	if (json_array_size(cs))
		return container_may_report(cs);
	if (json_array_size(ics))
		return container_may_report(ics);
	return json_array_size(tfjob__arr(status, "conditions")) > 0;
}

/* The uid of the first owner reference with controller: true (metav1.GetControllerOf), "" when
 * it has no uid; NULL when there is no controller reference. */
static const char *controller_uid(json_t *meta)
{
	size_t i;
	json_t *ref;
	json_array_foreach(tfjob__arr(meta, "ownerReferences"), i, ref) {
		if (json_is_true(json_object_get(ref, "controller"))) {
			const char *uid = tfjob__str(ref, "uid");
			return uid ? uid : "";
		}
	}
	return NULL;
}

void tfjob__summarize(tfjob__summary *out, json_t *obj)
{
	tfjob__summary s;
	memset(&s, 0, sizeof s);
	s.obj = obj;
	json_t *meta = tfjob__obj(obj, "metadata");
	json_t *labels = tfjob__obj(meta, "labels");
	s.name = tfjob__str(meta, "name");
	s.uid = tfjob__str(meta, "uid");
	s.controller_uid = controller_uid(meta);
	s.operator_name = tfjob__str(labels, TFJOB_LABEL_OPERATOR);
	json_t *ts = json_object_get(meta, "deletionTimestamp");
	s.deleting = ts && !json_is_null(ts);
	s.job_name = tfjob__str(labels, TFJOB_LABEL_JOB_NAME);
	s.rtype = tfjob__str(labels, TFJOB_LABEL_REPLICA_TYPE);
	s.rindex = tfjob__str(labels, TFJOB_LABEL_REPLICA_INDEX);
	s.index_ok = parse_index(&s.index, s.rindex) && s.index >= 0;
	json_t *status = tfjob__obj(obj, "status");
	s.phase = tfjob__str(status, "phase");
	s.phase_kind = phase_kind(s.phase);
	json_t *cs = tfjob__arr(status, "containerStatuses");
	summarize_exit_code(&s, cs);
	s.restarts = (int64_t)(restart_sum(tfjob__arr(status, "initContainerStatuses")) + restart_sum(cs));
	s.maybe_abnormal = may_be_abnormal(status);
	*out = s;
}

static int reserve(tfjob_objects *objs, size_t n, tfjob_error **err)
{
	if (n <= objs->cap)
		return 0;
	size_t cap = objs->cap ? objs->cap : 16;
	while (cap < n)
		cap *= 2;
	tfjob__summary *grown = realloc(objs->sums, cap * sizeof *grown);
	if (!grown)
		return tfjob__oom(err);
	objs->sums = grown;
	objs->cap = cap;
	return 0;
}

int tfjob__objects_wrap(tfjob_objects **out, json_t *items, const char *what, tfjob_error **err)
{
	*out = NULL;
	int rc = check_items(items, what, err);
	if (rc) {
		json_decref(items);
		return rc;
	}
	tfjob_objects *objs = calloc(1, sizeof(*objs));
	if (!objs) {
		json_decref(items);
		return tfjob__oom(err);
	}
	objs->items = items;
	size_t n = json_array_size(items);
	rc = reserve(objs, n ? n : 1, err);
	if (rc) {
		tfjob_objects_free(objs);
		return rc;
	}
	for (size_t i = 0; i < n; i++)
		tfjob__summarize(&objs->sums[i], json_array_get(items, i));
	objs->n = n;
	*out = objs;
	return 0;
}

int tfjob__objects_from_summaries(tfjob_objects **out, const tfjob__summary *const *sums, size_t n, tfjob_error **err)
{
	json_t *none = json_array();
	int rc = none ? tfjob__objects_wrap(out, none, "objects", err) : tfjob__oom(err);
	if (rc)
		return rc;
	rc = reserve(*out, n ? n : 1, err);
	if (rc) {
		tfjob_objects_free(*out);
		*out = NULL;
		return rc;
	}
	for (size_t i = 0; i < n; i++)
		(*out)->sums[i] = *sums[i];
	(*out)->n = n;
	return 0;
}

static int load_with_limits(tfjob_objects **out, const char *data, size_t len, const tfjob__limits *limits,
                            const char *what, tfjob_error **err)
{
	tfjob__docs docs;
	int rc = tfjob__docs_load(&docs, data, len, limits, err);
	if (rc)
		return rc;
	json_t *items = NULL;
	rc = tfjob__docs_flatten_items(&items, &docs, err);
	tfjob__docs_free(&docs);
	if (rc)
		return rc;
	return tfjob__objects_wrap(out, items, what, err);
}

int tfjob__objects_load(tfjob_objects **out, const char *data, size_t len, size_t max_bytes, const char *what,
                        tfjob_error **err)
{
	if (!data) {
		json_t *none = json_array();
		return none ? tfjob__objects_wrap(out, none, what, err) : tfjob__oom(err);
	}
	tfjob__limits limits;
	int rc = tfjob__limits_from_options(&limits, NULL, err);
	if (rc)
		return rc;
	limits.filename = what;
	limits.max_input_bytes = max_bytes ? max_bytes : TFJOB_DEFAULT_MAX_LIST_BYTES;
	return load_with_limits(out, data, len, &limits, what, err);
}

size_t tfjob__objects_size(const tfjob_objects *objects) { return objects ? objects->n : 0; }

int tfjob_objects_new(tfjob_objects **out, tfjob_error **err)
{
	if (!out)
		return tfjob__fail(err, TFJOB_EINVAL, "out is NULL");
	json_t *none = json_array();
	return none ? tfjob__objects_wrap(out, none, "objects", err) : tfjob__oom(err);
}

int tfjob_objects_parse(tfjob_objects **out, const char *data, size_t len, const tfjob_parse_options *opts,
                        tfjob_error **err)
{
	if (!out || (!data && len))
		return tfjob__fail(err, TFJOB_EINVAL, "out or data is NULL");
	*out = NULL;
	tfjob__limits limits;
	int rc = tfjob__limits_from_options(&limits, opts, err);
	if (rc)
		return rc;
	if (!opts || !opts->max_input_bytes)
		limits.max_input_bytes = TFJOB_DEFAULT_MAX_LIST_BYTES;
	return load_with_limits(out, data ? data : "", len, &limits, limits.filename ? limits.filename : "objects", err);
}

int tfjob_objects_add_json(tfjob_objects *objects, const char *json, tfjob_error **err)
{
	if (!objects || !json)
		return tfjob__fail(err, TFJOB_EINVAL, "objects or json is NULL");
	json_t *item = NULL;
	int rc = tfjob__load_one(&item, json, strlen(json), "object", err);
	if (rc)
		return rc;
	json_t *one = json_pack("[o]", item);
	rc = one ? check_items(one, "object", err) : tfjob__oom(err);
	size_t n = json_array_size(objects->items);
	if (!rc)
		rc = reserve(objects, n + 1, err);
	if (!rc && json_array_append(objects->items, json_array_get(one, 0)))
		rc = tfjob__oom(err);
	if (!rc) {
		tfjob__summarize(&objects->sums[n], json_array_get(objects->items, n));
		objects->n = n + 1;
	}
	json_decref(one);
	return rc;
}

size_t tfjob_objects_count(const tfjob_objects *objects) { return objects ? objects->n : 0; }

int tfjob_objects_item_json(char **out, const tfjob_objects *objects, size_t i, unsigned int flags, tfjob_error **err)
{
	if (!out || !objects || i >= json_array_size(objects->items))
		return tfjob__fail(err, TFJOB_EINVAL, "out or objects is NULL, or index %zu out of range", i);
	*out = tfjob__dump(json_array_get(objects->items, i), flags);
	return *out ? 0 : tfjob__oom(err);
}

const char *tfjob_objects_item_name(const tfjob_objects *objects, size_t i)
{
	if (!objects || i >= objects->n)
		return NULL;
	return objects->sums[i].name;
}

void tfjob_objects_free(tfjob_objects *objects)
{
	if (!objects)
		return;
	json_decref(objects->items);
	free(objects->sums);
	free(objects);
}
