/*
 * Controller references: which observed children are the job's, and which change hands.
 * SPDX-License-Identifier: Apache-2.0
 *
 * Both modes decide by the controller owner reference (metav1.GetControllerOf): a child
 * controlled by another object is never the job's, one controlled by the job (same uid) whose
 * labels match the job's selector (job-name and operator-name, v1.9's GenLabels) is.
 * training-operator-1.9 mode: v1.9 lists the children by that selector, keeps only the pods the
 * job controls (JobControlledPodList) and claims the services (ClaimServices: a matching orphan
 * service is adopted). Documented mode: Kubernetes' ClaimPods for both kinds: a matching orphan
 * that is not being deleted is adopted; a controlled child whose labels no longer match is
 * released.
 */
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"
#include "plan/step.h"

typedef enum claim { CLAIM_IGNORE, CLAIM_OURS, CLAIM_ADOPT, CLAIM_RELEASE } claim;

static bool labels_match(const ctx *c, const tfjob__summary *s)
{
	return s->job_name && !strcmp(s->job_name, c->name) && s->operator_name &&
	       !strcmp(s->operator_name, TFJOB_OPERATOR_NAME);
}

static claim claim_of(const ctx *c, const tfjob__summary *s, tfjob_object_kind kind)
{
	bool match = labels_match(c, s);
	if (s->controller_uid) {
		if (strcmp(s->controller_uid, c->uid))
			return CLAIM_IGNORE; /* another object's */
		if (match)
			return CLAIM_OURS;
		return c->documented ? CLAIM_RELEASE : CLAIM_IGNORE; /* v1.9 lists by the selector: never sees it */
	}
	if (!match || s->deleting || !s->name || (!c->documented && kind == TFJOB_OBJECT_POD))
		return CLAIM_IGNORE;
	return CLAIM_ADOPT;
}

/*
 * The merge patch that gives the child `refs` as its owner references, with the child's uid as a
 * precondition (a replaced child of the same name is not touched).
 */
static json_t *refs_patch(const tfjob__summary *s, json_t *refs)
{
	json_t *meta = json_pack("{s:o}", "ownerReferences", refs);
	if (meta && s->uid && json_object_set_new(meta, "uid", json_string(s->uid))) {
		json_decref(meta);
		return NULL;
	}
	return meta ? json_pack("{s:o}", "metadata", meta) : NULL;
}

/* The child's owner references as observed (a new reference; NULL: none). */
static json_t *observed_refs(const tfjob__summary *s)
{
	if (s->owner_refs)
		return json_loads(s->owner_refs, 0, NULL);
	return json_incref(tfjob__arr(tfjob__obj(s->obj, "metadata"), "ownerReferences"));
}

/* The child's owner references, less the job's (release) or plus the job's as controller (adopt). */
static json_t *claim_patch(ctx *c, const tfjob__summary *s, claim how)
{
	json_t *refs = json_array(), *observed = observed_refs(s);
	size_t i;
	json_t *ref;
	json_array_foreach(observed, i, ref) {
		const char *uid = tfjob__str(ref, "uid");
		if (how == CLAIM_RELEASE && !strcmp(uid ? uid : "", c->uid))
			continue;
		if (!refs || json_array_append(refs, ref)) {
			json_decref(refs);
			json_decref(observed);
			return NULL;
		}
	}
	json_decref(observed);
	if (how == CLAIM_ADOPT && (!refs || json_array_append_new(refs, tfjob__owner_reference_to(c->name, c->uid)))) {
		json_decref(refs);
		return NULL;
	}
	return refs ? refs_patch(s, refs) : NULL;
}

int tfjob__plan_claim_children(ctx *c, sum_list *out, const tfjob_objects *objects, tfjob_object_kind kind)
{
	size_t n = tfjob__objects_size(objects);
	out->n = 0;
	out->items = malloc((n ? n : 1) * sizeof *out->items);
	if (!out->items)
		return tfjob__oom(c->err);
	for (size_t i = 0; i < n; i++) {
		const tfjob__summary *s = &objects->sums[i];
		claim how = claim_of(c, s, kind);
		if (how == CLAIM_OURS || how == CLAIM_ADOPT)
			out->items[out->n++] = s;
		if (how == CLAIM_ADOPT || (how == CLAIM_RELEASE && s->name)) {
			json_t *patch = claim_patch(c, s, how);
			if (!patch)
				return tfjob__oom(c->err);
			int rc = tfjob__plan_object_action(c, how == CLAIM_ADOPT ? TFJOB_ACTION_ADOPT : TFJOB_ACTION_RELEASE,
			                                   kind, s->name, patch);
			if (rc)
				return rc;
		}
	}
	return 0;
}
