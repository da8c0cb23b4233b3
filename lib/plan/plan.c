/*
 * The reconcile planner's public face: the plan object, its actions and their JSON (the action
 * list itself is built by actions.c).
 * SPDX-License-Identifier: Apache-2.0
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/step.h"
#include "util/sink.h"
#include "util/versioned_structs.h"

int tfjob_plan_options_init(tfjob_plan_options *opts, unsigned int version)
{
	return tfjob__versioned_init(&tfjob__plan_options_v, opts, version);
}

static int check_plan_args(tfjob_plan **out, const tfjob_job *job, const tfjob_plan_options *opts, tfjob_error **err)
{
	if (!out || !job || !opts)
		return tfjob__fail(err, TFJOB_EINVAL, "tfjob_plan_new: out, job and opts are required");
	*out = NULL;
	return 0;
}

int tfjob_plan_new(tfjob_plan **out, const tfjob_job *job, const char *pods_json, const char *services_json,
                   const tfjob_plan_options *opts, tfjob_error **err)
{
	int rc = check_plan_args(out, job, opts, err);
	if (rc)
		return rc;
	tfjob_objects *pods = NULL, *services = NULL;
	rc = tfjob__objects_load(&pods, pods_json, pods_json ? strlen(pods_json) : 0, 0, "pods", err);
	if (!rc)
		rc = tfjob__objects_load(&services, services_json, services_json ? strlen(services_json) : 0, 0, "services",
		                         err);
	if (!rc)
		rc = tfjob__plan_run(out, job, pods, services, opts, err);
	tfjob_objects_free(pods);
	tfjob_objects_free(services);
	return rc;
}

int tfjob_plan_new_with_objects(tfjob_plan **out, const tfjob_job *job, const tfjob_objects *pods,
                                const tfjob_objects *services, const tfjob_plan_options *opts, tfjob_error **err)
{
	int rc = check_plan_args(out, job, opts, err);
	if (rc)
		return rc;
	return tfjob__plan_run(out, job, pods, services, opts, err);
}

void tfjob_plan_free(tfjob_plan *plan)
{
	if (!plan)
		return;
	for (size_t i = 0; i < plan->count; i++)
		tfjob__plan_action_clear(&plan->actions[i]);
	free(plan->actions);
	json_decref(plan->status);
	tfjob__plan_renderer_free(plan->renderer);
	free(plan);
}

/* ---- accessors ---- */

static const struct tfjob__action *action_at(const tfjob_plan *plan, size_t i)
{
	return plan && i < plan->count ? &plan->actions[i] : NULL;
}

size_t tfjob_plan_action_count(const tfjob_plan *plan) { return plan ? plan->count : 0; }

tfjob_action_type tfjob_plan_action_type(const tfjob_plan *plan, size_t i)
{
	const struct tfjob__action *a = action_at(plan, i);
	return a ? a->type : TFJOB_ACTION_EVENT;
}

tfjob_object_kind tfjob_plan_action_kind(const tfjob_plan *plan, size_t i)
{
	const struct tfjob__action *a = action_at(plan, i);
	return a ? a->kind : TFJOB_OBJECT_NONE;
}

const char *tfjob_plan_action_name(const tfjob_plan *plan, size_t i)
{
	const struct tfjob__action *a = action_at(plan, i);
	return a && a->type != TFJOB_ACTION_EVENT ? a->name : NULL;
}

int tfjob__plan_action_object(json_t **out, const tfjob_plan *plan, size_t i, tfjob_error **err)
{
	const struct tfjob__action *a = action_at(plan, i);
	*out = NULL;
	if (!a || (a->type != TFJOB_ACTION_CREATE && !a->object))
		return tfjob__fail(err, TFJOB_EINVAL, "action %zu has no object (not a create, adopt, release or patch)", i);
	return tfjob__plan_action_object_of(out, plan, a, err);
}

int tfjob_plan_action_object_json(char **out, const tfjob_plan *plan, size_t i, unsigned int flags, tfjob_error **err)
{
	const struct tfjob__action *a = action_at(plan, i);
	if (!out || !a || (a->type != TFJOB_ACTION_CREATE && !a->object))
		return tfjob__fail(err, TFJOB_EINVAL, "action %zu has no object (not a create, adopt, release or patch)", i);
	json_t *obj = NULL;
	int rc = tfjob__plan_action_object_of(&obj, plan, a, err);
	if (rc)
		return rc;
	*out = tfjob__dump(obj, flags);
	json_decref(obj);
	return *out ? 0 : tfjob__oom(err);
}

tfjob_event_type tfjob_plan_action_event_type(const tfjob_plan *plan, size_t i)
{
	const struct tfjob__action *a = action_at(plan, i);
	return a && a->type == TFJOB_ACTION_EVENT ? a->event_type : TFJOB_EVENT_NORMAL;
}

const char *tfjob_plan_action_reason(const tfjob_plan *plan, size_t i)
{
	const struct tfjob__action *a = action_at(plan, i);
	return a && a->type == TFJOB_ACTION_EVENT ? a->reason : NULL;
}

const char *tfjob_plan_action_message(const tfjob_plan *plan, size_t i)
{
	const struct tfjob__action *a = action_at(plan, i);
	return a && a->type == TFJOB_ACTION_EVENT ? a->message : NULL;
}

int tfjob_plan_status_json(char **out, const tfjob_plan *plan, unsigned int flags, tfjob_error **err)
{
	if (!out || !plan)
		return tfjob__fail(err, TFJOB_EINVAL, "tfjob_plan_status_json: NULL argument");
	*out = tfjob__dump(plan->status, flags);
	return *out ? 0 : tfjob__oom(err);
}

int tfjob_plan_status_changed(const tfjob_plan *plan) { return plan && plan->changed; }

json_t *tfjob__plan_status(const tfjob_plan *plan) { return plan ? plan->status : NULL; }

int tfjob_plan_requeue_after(int64_t *out, const tfjob_plan *plan)
{
	if (!out || !plan)
		return TFJOB_EINVAL;
	if (!plan->has_requeue)
		return TFJOB_ENOTFOUND;
	*out = plan->requeue;
	return 0;
}

const char *tfjob_action_type_name(tfjob_action_type type)
{
	switch (type) {
	case TFJOB_ACTION_CREATE: return "create";
	case TFJOB_ACTION_DELETE: return "delete";
	case TFJOB_ACTION_EVENT: return "event";
	case TFJOB_ACTION_ADOPT: return "adopt";
	case TFJOB_ACTION_RELEASE: return "release";
	case TFJOB_ACTION_PATCH: return "patch";
	case TFJOB_ACTION_WAIT: return "wait";
	}
	return "unknown";
}

const char *tfjob_object_kind_name(tfjob_object_kind kind)
{
	switch (kind) {
	case TFJOB_OBJECT_POD: return "Pod";
	case TFJOB_OBJECT_SERVICE: return "Service";
	case TFJOB_OBJECT_TFJOB: return "TFJob";
	case TFJOB_OBJECT_PODGROUP: return "PodGroup";
	case TFJOB_OBJECT_NONE: break;
	}
	return "";
}

const char *tfjob_event_type_name(tfjob_event_type type) { return type == TFJOB_EVENT_WARNING ? "Warning" : "Normal"; }

/* One action as the plan's JSON shows it (a create with its object): a new reference in *out. */
static int action_json(json_t **out, const tfjob_plan *plan, const struct tfjob__action *a, tfjob_error **err)
{
	json_t *o = json_object(), *obj = NULL;
	if (!o)
		return tfjob__oom(err);
	int bad = json_object_set_new(o, "action", json_string(tfjob_action_type_name(a->type)));
	if (a->type == TFJOB_ACTION_EVENT) {
		bad |= json_object_set_new(o, "type", json_string(tfjob_event_type_name(a->event_type)));
		bad |= json_object_set_new(o, "reason", json_string(a->reason));
		bad |= json_object_set_new(o, "message", json_string(a->message));
	} else {
		bad |= json_object_set_new(o, "kind", json_string(tfjob_object_kind_name(a->kind)));
		bad |= json_object_set_new(o, "name", json_string(a->name));
		if (a->type == TFJOB_ACTION_CREATE) {
			int rc = tfjob__plan_action_object_of(&obj, plan, a, err);
			if (rc) {
				json_decref(o);
				return rc;
			}
			bad |= json_object_set_new(o, "object", obj);
		} else if (a->object) {
			bad |= json_object_set(o, "patch", a->object); /* adopt, release, patch */
		}
	}
	if (bad) {
		json_decref(o);
		return tfjob__oom(err);
	}
	*out = o;
	return 0;
}

/* The actions array (depth 1), one action built, written and released at a time. */
static int write_actions(tfjob__sink *s, const tfjob_plan *plan, unsigned int flags, tfjob_error **err)
{
	tfjob__sink_adds(s, "[");
	for (size_t i = 0; i < plan->count && !s->failed; i++) {
		json_t *o = NULL;
		int rc = action_json(&o, plan, &plan->actions[i], err);
		if (rc)
			return rc;
		if (i)
			tfjob__sink_adds(s, ",");
		tfjob__sink_newline(s, flags, 2);
		tfjob__sink_add_json(s, o, flags, 2);
		json_decref(o);
	}
	if (plan->count)
		tfjob__sink_newline(s, flags, 1);
	tfjob__sink_adds(s, "]");
	return 0;
}

/* The tfjobctl contract's JSON of a plan into s, byte for byte as a dump of the whole tree (flags). */
static int write_plan(tfjob__sink *s, const tfjob_plan *plan, unsigned int flags, tfjob_error **err)
{
	static const char *const document_order[4] = { "actions", "status", "statusChanged", "requeueAfterSeconds" };
	static const char *const sorted_order[4] = { "actions", "requeueAfterSeconds", "status", "statusChanged" };
	const char *const *keys = (flags & TFJOB_JSON_SORT_KEYS) ? sorted_order : document_order;
	int rc = 0;
	tfjob__sink_adds(s, "{");
	for (size_t k = 0; k < 4 && !rc; k++) {
		tfjob__sink_key(s, keys[k], k == 0, flags, 1);
		if (!strcmp(keys[k], "actions")) {
			rc = write_actions(s, plan, flags, err);
		} else if (!strcmp(keys[k], "status")) {
			tfjob__sink_add_json(s, plan->status, flags, 1);
		} else if (!strcmp(keys[k], "statusChanged")) {
			tfjob__sink_adds(s, plan->changed ? "true" : "false");
		} else if (plan->has_requeue) {
			char num[24];
			snprintf(num, sizeof num, "%" PRId64, plan->requeue);
			tfjob__sink_adds(s, num);
		} else {
			tfjob__sink_adds(s, "null");
		}
	}
	tfjob__sink_newline(s, flags, 0);
	tfjob__sink_adds(s, "}");
	return rc;
}

int tfjob_plan_to_json(char **out, const tfjob_plan *plan, unsigned int flags, tfjob_error **err)
{
	if (!out || !plan)
		return tfjob__fail(err, TFJOB_EINVAL, "tfjob_plan_to_json: NULL argument");
	tfjob__sink s;
	tfjob__sink_init(&s, NULL, NULL);
	return tfjob__sink_end(&s, write_plan(&s, plan, flags, err), out, err);
}

int tfjob_plan_write_json(const tfjob_plan *plan, unsigned int flags, tfjob_write_cb write, void *payload,
                          tfjob_error **err)
{
	if (!plan || !write)
		return tfjob__fail(err, TFJOB_EINVAL, "tfjob_plan_write_json: NULL argument");
	tfjob__sink s;
	tfjob__sink_init(&s, write, payload);
	return tfjob__sink_end(&s, write_plan(&s, plan, flags, err), NULL, err);
}
