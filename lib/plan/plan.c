/*
 * The reconcile planner's public face: the plan object, its actions and their JSON.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/step.h"
#include "util/versions.h"

/* ---- plan building ---- */

void tfjob__plan_action_clear(struct tfjob__action *a)
{
	free(a->name);
	json_decref(a->object);
	free(a->reason);
	free(a->message);
}

/*
 * Append *a to the plan, which takes what it owns; `complete` is false when a copy inside it
 * could not be made. On failure what *a owns is released and TFJOB_ENOMEM returned.
 */
static int push_action(ctx *c, struct tfjob__action *a, bool complete)
{
	tfjob_plan *p = c->plan;
	if (complete && p->count == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 16;
		struct tfjob__action *grown = realloc(p->actions, cap * sizeof *grown);
		if (grown) {
			p->actions = grown;
			p->cap = cap;
		}
	}
	if (!complete || p->count == p->cap) {
		tfjob__plan_action_clear(a);
		return tfjob__oom(c->err);
	}
	p->actions[p->count++] = *a;
	return 0;
}

int tfjob__plan_event(ctx *c, tfjob_event_type type, const char *reason, const char *message)
{
	struct tfjob__action a = { TFJOB_ACTION_EVENT, TFJOB_OBJECT_NONE, NULL, NULL, type, NULL, NULL };
	a.reason = tfjob__strdup(reason ? reason : "");
	a.message = tfjob__strdup(message ? message : "");
	return push_action(c, &a, a.reason && a.message);
}

int tfjob__plan_eventf(ctx *c, tfjob_event_type type, const char *reason, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = tfjob__strdup_vprintf(fmt, ap);
	va_end(ap);
	if (!msg)
		return tfjob__oom(c->err);
	int rc = tfjob__plan_event(c, type, reason, msg);
	free(msg);
	return rc;
}

int tfjob__plan_object_action(ctx *c, tfjob_action_type type, tfjob_object_kind kind, const char *name, json_t *obj)
{
	struct tfjob__action a = { type, kind, tfjob__strdup(name ? name : ""), obj, TFJOB_EVENT_NORMAL, NULL, NULL };
	return push_action(c, &a, a.name != NULL);
}

void tfjob__plan_requeue(ctx *c, int64_t secs)
{
	if (secs < 0)
		secs = 0;
	if (!c->plan->has_requeue || secs < c->plan->requeue) {
		c->plan->has_requeue = true;
		c->plan->requeue = secs;
	}
}

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

int tfjob_plan_action_object_json(char **out, const tfjob_plan *plan, size_t i, unsigned int flags, tfjob_error **err)
{
	const struct tfjob__action *a = action_at(plan, i);
	if (!out || !a || a->type != TFJOB_ACTION_CREATE || !a->object)
		return tfjob__fail(err, TFJOB_EINVAL, "action %zu is not a create action", i);
	*out = tfjob__dump(a->object, flags);
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
	}
	return "unknown";
}

const char *tfjob_object_kind_name(tfjob_object_kind kind)
{
	switch (kind) {
	case TFJOB_OBJECT_POD: return "Pod";
	case TFJOB_OBJECT_SERVICE: return "Service";
	case TFJOB_OBJECT_TFJOB: return "TFJob";
	case TFJOB_OBJECT_NONE: break;
	}
	return "";
}

const char *tfjob_event_type_name(tfjob_event_type type) { return type == TFJOB_EVENT_WARNING ? "Warning" : "Normal"; }

static json_t *action_json(const struct tfjob__action *a)
{
	json_t *o = json_object();
	if (!o)
		return NULL;
	int bad = json_object_set_new(o, "action", json_string(tfjob_action_type_name(a->type)));
	if (a->type == TFJOB_ACTION_EVENT) {
		bad |= json_object_set_new(o, "type", json_string(tfjob_event_type_name(a->event_type)));
		bad |= json_object_set_new(o, "reason", json_string(a->reason));
		bad |= json_object_set_new(o, "message", json_string(a->message));
	} else {
		bad |= json_object_set_new(o, "kind", json_string(tfjob_object_kind_name(a->kind)));
		bad |= json_object_set_new(o, "name", json_string(a->name));
		if (a->type == TFJOB_ACTION_CREATE)
			bad |= json_object_set(o, "object", a->object ? a->object : json_null());
	}
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

int tfjob_plan_to_json(char **out, const tfjob_plan *plan, unsigned int flags, tfjob_error **err)
{
	if (!out || !plan)
		return tfjob__fail(err, TFJOB_EINVAL, "tfjob_plan_to_json: NULL argument");
	json_t *root = json_object(), *actions = json_array();
	int bad = !root || !actions;
	for (size_t i = 0; i < plan->count && !bad; i++)
		bad = json_array_append_new(actions, action_json(&plan->actions[i]));
	if (!bad) {
		bad = json_object_set_new(root, "actions", actions);
		actions = NULL;
	}
	bad = bad || json_object_set(root, "status", plan->status) ||
	      json_object_set_new(root, "statusChanged", json_boolean(plan->changed)) ||
	      json_object_set_new(root, "requeueAfterSeconds",
	                          plan->has_requeue ? json_integer(plan->requeue) : json_null());
	if (bad) {
		json_decref(actions);
		json_decref(root);
		return tfjob__oom(err);
	}
	*out = tfjob__dump(root, flags);
	json_decref(root);
	return *out ? 0 : tfjob__oom(err);
}
