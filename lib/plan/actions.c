/*
 * The action list a plan step appends to (step.c and the files it calls): events, creates,
 * deletes, claims, requeues. A create keeps what it needs to render its object when the object
 * is read, so a plan of many creates holds no rendered child.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "plan/step.h"

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
	struct tfjob__action a = { .type = TFJOB_ACTION_EVENT, .kind = TFJOB_OBJECT_NONE, .event_type = type };
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
	struct tfjob__action a = { .type = type, .kind = kind, .name = tfjob__strdup(name ? name : ""), .object = obj,
	                           .event_type = TFJOB_EVENT_NORMAL };
	return push_action(c, &a, a.name != NULL);
}

/* ---- creates rendered on demand ---- */

struct tfjob__plan_renderer {
	tfjob_job *job;             /* the defaulted job */
	tfjob_graph *graph;
	tfjob_render_options opts;  /* resolved; only what rendering a child reads (scheduler_name is ours) */
	char *scheduler_name;
	bool *rendered;             /* [2 * types]: a pod / a service of the type was rendered in the step */
};

void tfjob__plan_renderer_free(struct tfjob__plan_renderer *r)
{
	if (!r)
		return;
	tfjob_job_free(r->job);
	tfjob_graph_free(r->graph);
	free(r->scheduler_name);
	free(r->rendered);
	free(r);
}

/* The plan's renderer, made at the first create from the step's job and render options. */
static int plan_renderer(struct tfjob__plan_renderer **out, ctx *c)
{
	if (c->plan->renderer) {
		*out = c->plan->renderer;
		return 0;
	}
	struct tfjob__plan_renderer *r = calloc(1, sizeof *r);
	if (!r)
		return tfjob__oom(c->err);
	tfjob_render_options ro;
	int rc = tfjob__render_options_resolve(&ro, c->render, c->err);
	if (!rc)
		rc = tfjob_job_clone(&r->job, c->job, c->err);
	if (!rc)
		rc = tfjob__graph_build(&r->graph, r->job, &ro, false, c->err);
	if (!rc) {
		/* the graph holds what the address callback and the domain gave; the rest is not kept */
		r->scheduler_name = tfjob__strdup(ro.scheduler_name);
		r->rendered = calloc(2 * r->graph->ntypes + 1, sizeof *r->rendered);
		tfjob_render_options kept = TFJOB_RENDER_OPTIONS_INIT;
		kept.compat = ro.compat;
		kept.gang_scheduler = ro.gang_scheduler;
		kept.scheduler_name = r->scheduler_name;
		kept.exclude_evaluator = ro.exclude_evaluator;
		r->opts = kept;
		if (!r->scheduler_name || !r->rendered)
			rc = tfjob__oom(c->err);
	}
	if (rc) {
		tfjob__plan_renderer_free(r);
		return rc;
	}
	c->plan->renderer = *out = r;
	return 0;
}

static int render_child(json_t **out, const struct tfjob__plan_renderer *r, tfjob_object_kind kind, size_t t,
                        int64_t index, tfjob_error **err)
{
	if (kind == TFJOB_OBJECT_POD)
		return tfjob__render_pod_graph(out, r->job, r->graph, &r->opts, t, index, err);
	return tfjob__render_service_graph(out, r->job, r->graph, t, index, err);
}

int tfjob__plan_create(ctx *c, const char *type, int64_t index, tfjob_object_kind kind)
{
	struct tfjob__plan_renderer *r = NULL;
	size_t t = 0;
	int rc = plan_renderer(&r, c);
	if (!rc)
		rc = tfjob__graph_lookup(&t, r->graph, type, c->err);
	if (!rc)
		rc = tfjob__graph_check(r->graph, t, index, c->err);
	if (rc)
		return rc;
	json_t *obj = NULL;
	bool *rendered = &r->rendered[2 * t + (kind == TFJOB_OBJECT_SERVICE)];
	if (!*rendered) {
		rc = render_child(&obj, r, kind, t, index, c->err);
		if (rc)
			return rc;
		*rendered = true;
	}
	struct tfjob__action a = { .type = TFJOB_ACTION_CREATE, .kind = kind,
	                           .name = tfjob__strdup(TFJOB__RT_NAME(&r->graph->types[t], index)), .object = obj,
	                           .event_type = TFJOB_EVENT_NORMAL, .rtype = t, .index = index };
	return push_action(c, &a, a.name != NULL);
}

int tfjob__plan_action_object_of(json_t **out, const tfjob_plan *plan, const struct tfjob__action *a,
                                 tfjob_error **err)
{
	if (a->object) {
		*out = json_incref(a->object);
		return 0;
	}
	return render_child(out, plan->renderer, a->kind, a->rtype, a->index, err);
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
