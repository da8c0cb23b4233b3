/*
 * The tfjob_objects handle: a jansson array of objects and, beside it, a compact summary of each
 * object (what the planner reads for every pod and service), computed once when the object
 * enters the list. The planner reads the summaries in its per-object loops and touches the JSON
 * only for the few objects that need more (abnormal pods, created children).
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef TFJOB_INTERNAL_OBJECTS_H
#define TFJOB_INTERNAL_OBJECTS_H

#include <jansson.h>

#include "util/common.h"

/* v1.9's "no exit code seen" marker. */
#define TFJOB__NO_EXIT_CODE 0xbeef

/* status.phase, compared exactly (strcmp) with Kubernetes' spellings. */
typedef enum tfjob__phase {
	TFJOB__PHASE_OTHER = 0, /* absent, not a string, or another value */
	TFJOB__PHASE_RUNNING,
	TFJOB__PHASE_SUCCEEDED,
	TFJOB__PHASE_FAILED
} tfjob__phase;

/*
 * What the planner reads of one object. Every pointer is borrowed from the object's JSON (which
 * the list owns and never changes); NULL where the field is absent or not a string.
 */
typedef struct tfjob__summary {
	json_t *obj;            /* the object itself */
	const char *name;       /* metadata.name */
	const char *uid;        /* metadata.uid */
	const char *controller_uid; /* uid of the controller owner reference ("" without a uid); NULL: no controller */
	const char *operator_name; /* label training.kubeflow.org/operator-name */
	const char *owner_refs; /* metadata.ownerReferences as compact JSON when obj lacks the metadata (a
	                           compact cache's child); NULL: read them from obj */
	const char *job_name;   /* label training.kubeflow.org/job-name */
	const char *rtype;      /* label training.kubeflow.org/replica-type, as written */
	const char *rindex;     /* label training.kubeflow.org/replica-index, as written */
	const char *phase;      /* status.phase */
	int64_t index;          /* the replica index when index_ok */
	int64_t exit_code;      /* exitCode of the `tensorflow` container's terminated state, else TFJOB__NO_EXIT_CODE */
	int64_t restarts;       /* restartCount summed over initContainerStatuses, then containerStatuses (wrapping) */
	unsigned char phase_kind; /* tfjob__phase */
	bool index_ok;          /* rindex parses as strconv.Atoi would and is >= 0 */
	bool deleting;          /* metadata.deletionTimestamp present and not null */
	bool exit_found;        /* exit_code came from a terminated `tensorflow` container */
	bool maybe_abnormal;    /* RecordAbnormalPods may report something: the planner looks at the JSON */
} tfjob__summary;

struct tfjob_objects {
	json_t *items;         /* array of objects (owned); empty for a list of summaries only */
	tfjob__summary *sums;  /* sums[i] describes items[i] */
	size_t n;              /* summaries */
	size_t cap;            /* allocated summaries */
};

/* Summarise one object (an object, as checked on entry to a list). */
void tfjob__summarize(tfjob__summary *out, json_t *obj);

/*
 * A new list around items (takes the reference, also on error): the items are checked (what
 * names the list in errors) and summarised.
 */
int tfjob__objects_wrap(tfjob_objects **out, json_t *items, const char *what, tfjob_error **err);

/*
 * A list of summaries only (copied; the strings and objects they point to are borrowed and must
 * outlive the list): a controller's compact cache handed to the planner. Its items have no JSON
 * (tfjob_objects_item_json() fails), which the planner never asks for.
 */
int tfjob__objects_from_summaries(tfjob_objects **out, const tfjob__summary *const *sums, size_t n, tfjob_error **err);

/* Parse text (NULL = none) into a new list; what names the list in errors. */
int tfjob__objects_load(tfjob_objects **out, const char *data, size_t len, size_t max_bytes, const char *what,
                        tfjob_error **err);

/* Number of objects of a list (0 for NULL); objects->sums[i] describes the i-th. */
size_t tfjob__objects_size(const tfjob_objects *objects);

#endif
