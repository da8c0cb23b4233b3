package diff

/*
#cgo pkg-config: tfjob
#include <stdlib.h>
#include <string.h>
#include <tfjob/tfjob.h>

// The PriorityClasses the gang comparison's cluster has (v1.9 reads them through its lister).
static int diff_priority(int32_t *out, const char *name, void *payload)
{
	(void)payload;
	if (!strcmp(name, "high")) { *out = 1000; return 0; }
	if (!strcmp(name, "low")) { *out = 10; return 0; }
	if (!strcmp(name, "below-zero")) { *out = -5; return 0; }
	return TFJOB_ENOTFOUND;
}

// One planner step with gang scheduling and an observed PodGroup (group, NULL = none), the plan
// JSON into *plan: not reachable through the Go binding's options. On error *msg is set.
static int diff_gang(char **plan, char **msg, const char *job_json, const char *pods, const char *group, int compat,
                     int64_t now, int gang, const char *scheduler)
{
	tfjob_error *err = NULL;
	tfjob_job *job = NULL;
	tfjob_plan *p = NULL;
	*plan = *msg = NULL;
	int rc = tfjob_job_parse(&job, job_json, strlen(job_json), NULL, &err);
	tfjob_default_options dopts = TFJOB_DEFAULT_OPTIONS_INIT;
	dopts.compat = (tfjob_compat)compat;
	if (!rc)
		rc = tfjob_job_apply_defaults(job, &dopts, &err);
	tfjob_render_options ro = TFJOB_RENDER_OPTIONS_INIT;
	ro.compat = (tfjob_compat)compat;
	ro.gang_scheduler = (tfjob_gang_scheduler)gang;
	ro.scheduler_name = scheduler;
	ro.priority_cb = diff_priority;
	tfjob_plan_options po = TFJOB_PLAN_OPTIONS_INIT;
	po.compat = (tfjob_compat)compat;
	po.now = now;
	po.render = &ro;
	po.pod_group_json = group;
	if (!rc)
		rc = tfjob_plan_new(&p, job, pods, NULL, &po, &err);
	if (!rc)
		rc = tfjob_plan_to_json(plan, p, TFJOB_JSON_COMPACT, &err);
	if (rc && err)
		*msg = strdup(tfjob_error_message(err));
	tfjob_error_free(err);
	tfjob_plan_free(p);
	tfjob_job_free(job);
	return rc;
}
*/
import "C"

import (
	"encoding/json"
	"fmt"
	"time"
	"unsafe"

	tfjob "github.com/libtfjob/libtfjob/bindings/go/tfjob"
)

// Gang schedulers of libtfjob's render options.
const (
	gangVolcano          = 1
	gangSchedulerPlugins = 2
)

// oursGang is one libtfjob planner step with gang scheduling and the observed PodGroup (nil: none).
func oursGang(jobJSON, pods, group []byte, now time.Time, gang int, scheduler string) (*tfjob.Plan, error) {
	cstr := func(b []byte) *C.char {
		if len(b) == 0 {
			return nil
		}
		return C.CString(string(b))
	}
	cjob, cpods, cgroup := cstr(jobJSON), cstr(pods), cstr(group)
	defer C.free(unsafe.Pointer(cjob))
	defer C.free(unsafe.Pointer(cpods))
	defer C.free(unsafe.Pointer(cgroup))
	csched := cstr([]byte(scheduler))
	defer C.free(unsafe.Pointer(csched))
	var plan, msg *C.char
	rc := C.diff_gang(&plan, &msg, cjob, cpods, cgroup, C.int(compat), C.int64_t(now.Unix()), C.int(gang), csched)
	defer C.tfjob_free(unsafe.Pointer(plan))
	defer C.free(unsafe.Pointer(msg))
	if rc != 0 {
		return nil, fmt.Errorf("libtfjob %d: %s", int(rc), C.GoString(msg))
	}
	var p tfjob.Plan
	if err := json.Unmarshal([]byte(C.GoString(plan)), &p); err != nil {
		return nil, err
	}
	return &p, nil
}
