/*
 * GPUs of the local backend: which ones the engine may hand out (tfjob_local_options.gpus, else
 * those found on this machine), and a disjoint CUDA_VISIBLE_DEVICES for each Pod that asks for
 * nvidia.com/gpu, as the device plugin gives a container its own devices.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/job.h"
#include "local/internal.h"

#define GPU_RESOURCE "nvidia.com/gpu"
#define CUDA_ENV "CUDA_VISIBLE_DEVICES"
#define PROC_GPUS "/proc/driver/nvidia/gpus"

/* "GPU 0: NVIDIA A100 (UUID: GPU-...)" lines of nvidia-smi -L: their indexes. */
static void from_nvidia_smi(json_t *ids)
{
	FILE *f = popen("nvidia-smi -L 2>/dev/null", "r");
	if (!f)
		return;
	char line[512];
	while (fgets(line, sizeof line, f)) {
		char *end;
		if (strncmp(line, "GPU ", 4) != 0)
			continue;
		long index = strtol(line + 4, &end, 10);
		if (end != line + 4 && *end == ':' && index >= 0) {
			char id[32];
			snprintf(id, sizeof id, "%ld", index);
			json_object_set_new(ids, id, json_null());
		}
	}
	pclose(f);
}

/* One directory per GPU (its PCI address) in /proc/driver/nvidia/gpus: 0..N-1. */
static void from_proc(json_t *ids)
{
	DIR *d = opendir(PROC_GPUS);
	if (!d)
		return;
	long n = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL)
		n += e->d_name[0] != '.';
	closedir(d);
	for (long i = 0; i < n; i++) {
		char id[32];
		snprintf(id, sizeof id, "%ld", i);
		json_object_set_new(ids, id, json_null());
	}
}

/* "0,1, 3" -> ids; TFJOB_EINVAL for an empty or odd entry or a repeated one. */
static int from_list(json_t *ids, const char *list, tfjob_error **err)
{
	const char *p = list;
	while (*p) {
		while (*p == ' ' || *p == ',')
			p++;
		size_t len = strcspn(p, ", ");
		if (!len)
			break;
		char id[128];
		if (len >= sizeof id)
			return tfjob__fail(err, TFJOB_EINVAL, "GPU list '%s': an id is too long", list);
		memcpy(id, p, len);
		id[len] = '\0';
		for (size_t i = 0; i < len; i++)
			if (!isalnum((unsigned char)id[i]) && id[i] != '-' && id[i] != ':' && id[i] != '.')
				return tfjob__fail(err, TFJOB_EINVAL,
				                   "GPU list '%s': '%s' is no GPU id (an index such as 0, or a UUID such as GPU-...)",
				                   list, id);
		if (json_object_get(ids, id))
			return tfjob__fail(err, TFJOB_EINVAL, "GPU list '%s': GPU %s is listed twice", list, id);
		json_object_set_new(ids, id, json_null());
		p += len;
	}
	return 0;
}

int tfjob__local_gpus_known(tfjob_local *l, tfjob_error **err)
{
	if (l->gpus)
		return 0;
	json_t *ids = json_object();
	if (!ids)
		return tfjob__oom(err);
	int rc = 0;
	if (l->gpus_option) {
		rc = from_list(ids, l->gpus_option, err);
	} else {
		from_nvidia_smi(ids);
		if (!json_object_size(ids))
			from_proc(ids);
	}
	if (rc) {
		json_decref(ids);
		return rc;
	}
	l->gpus = ids;
	return 0;
}

int64_t tfjob__local_gpu_count(json_t *container)
{
	json_t *resources = tfjob__obj(container, "resources");
	json_t *v = json_object_get(tfjob__obj(resources, "limits"), GPU_RESOURCE);
	if (!v)
		v = json_object_get(tfjob__obj(resources, "requests"), GPU_RESOURCE);
	if (!v || json_is_null(v))
		return 0;
	if (json_is_integer(v))
		return json_integer_value(v) >= 0 ? json_integer_value(v) : -1;
	const char *s = json_string_value(v);
	char *end;
	if (!s || !isdigit((unsigned char)s[0]))
		return -1;
	errno = 0;
	long long n = strtoll(s, &end, 10);
	return errno || *end || n > 1000000 ? -1 : n;
}

/* The value of the container's own CUDA_VISIBLE_DEVICES, when it sets one (it wins). */
static bool container_sets_it(const lpod *p)
{
	for (size_t i = 0; p->launch.env && p->launch.env[i]; i++)
		if (!strncmp(p->launch.env[i], CUDA_ENV "=", sizeof CUDA_ENV))
			return true;
	return false;
}

static bool add_env(lpod *p, char *entry)
{
	size_t n = 0;
	while (p->launch.env && p->launch.env[n])
		n++;
	char **grown = entry ? realloc(p->launch.env, (n + 2) * sizeof *grown) : NULL;
	if (!grown) {
		free(entry);
		return false;
	}
	grown[n] = entry;
	grown[n + 1] = NULL;
	p->launch.env = grown;
	return true;
}

static void cannot_have_them(tfjob_local *l, lpod *p, size_t have)
{
	free(p->spawn_error);
	p->spawn_error = tfjob__strdup_printf("asks for %lld GPU%s (%s), the local engine has %zu", (long long)p->launch.gpus,
	                                      p->launch.gpus == 1 ? "" : "s", GPU_RESOURCE, have);
	p->state = LPOD_DONE;
	p->code = 128;
	p->finished_wall = tfjob__local_wall();
	tfjob__local_event(l, p->name, "Warning", "FailedToStart", "%s", p->spawn_error ? p->spawn_error : "too few GPUs");
}

bool tfjob__local_gpus_take(tfjob_local *l, lpod *p)
{
	if (p->has_gpus || container_sets_it(p))
		return true;
	if (p->launch.gpus <= 0) {
		p->has_gpus = add_env(p, tfjob__strdup(CUDA_ENV "=")); /* no GPU limit: no GPU, as in a pod */
		return true;
	}
	if (tfjob__local_gpus_known(l, NULL) != 0 || (int64_t)json_object_size(l->gpus) < p->launch.gpus) {
		cannot_have_them(l, p, l->gpus ? json_object_size(l->gpus) : 0);
		return false;
	}
	int64_t free_count = 0;
	const char *id;
	json_t *owner;
	json_object_foreach(l->gpus, id, owner)
		free_count += json_is_null(owner);
	if (free_count < p->launch.gpus)
		return false; /* Pending until a Pod holding some ends */
	char *list = tfjob__strdup(CUDA_ENV "=");
	int64_t taken = 0;
	json_object_foreach(l->gpus, id, owner) {
		if (!json_is_null(owner) || taken == p->launch.gpus || !list)
			continue;
		char *longer = tfjob__strdup_printf("%s%s%s", list, taken ? "," : "", id);
		free(list);
		list = longer;
		json_object_set_new(l->gpus, id, json_string(p->name));
		taken++;
	}
	p->has_gpus = add_env(p, list);
	if (!p->has_gpus)
		tfjob__local_gpus_release(l, p);
	return p->has_gpus;
}

void tfjob__local_gpus_release(tfjob_local *l, const lpod *p)
{
	const char *id;
	json_t *owner;
	json_object_foreach(l->gpus, id, owner)
		if (json_is_string(owner) && !strcmp(json_string_value(owner), p->name))
			json_object_set_new(l->gpus, id, json_null());
}

int tfjob__local_gpus_check(tfjob_local *l, const tfjob_job *job, tfjob_error **err)
{
	int64_t total = 0;
	char field[300] = "", parts[512] = "";
	json_t *specs = tfjob__replica_specs(job);
	const char *type;
	json_t *rs;
	json_object_foreach(specs, type, rs) {
		json_t *containers = tfjob__arr(tfjob__pod_spec(rs), "containers");
		int i = tfjob__tensorflow_container_index(containers);
		int64_t each = i >= 0 ? tfjob__local_gpu_count(json_array_get(containers, (size_t)i)) : 0, replicas = 1;
		if (each <= 0)
			continue;
		tfjob__int(&replicas, rs, "replicas");
		total += each * replicas;
		snprintf(field, sizeof field, "spec.tfReplicaSpecs[%s].template.spec.containers[%d].resources.limits[%s]", type,
		         i, GPU_RESOURCE);
		size_t len = strlen(parts);
		snprintf(parts + len, sizeof parts - len, "%s%s: %lld x %lld", len ? ", " : "", type, (long long)replicas,
		         (long long)each);
	}
	if (!total)
		return 0;
	pthread_mutex_lock(&l->lock);
	int rc = tfjob__local_gpus_known(l, err);
	size_t have = rc ? 0 : json_object_size(l->gpus);
	char ids[256] = "";
	const char *id;
	json_t *owner;
	json_object_foreach(rc ? NULL : l->gpus, id, owner) {
		size_t len = strlen(ids);
		snprintf(ids + len, sizeof ids - len, "%s%s", len ? "," : "", id);
	}
	pthread_mutex_unlock(&l->lock);
	if (rc)
		return rc;
	if (total > (int64_t)have)
		return tfjob__fail_field(err, TFJOB_EINVAL, field,
		                         "the job asks for %lld GPU%s (%s) and %zu are available%s%s%s: run it with fewer, "
		                         "or give the GPUs to use (tfjobctl run --gpus LIST)",
		                         (long long)total, total == 1 ? "" : "s", parts, have, have ? " (" : "", ids, have ? ")" : "");
	return 0;
}
