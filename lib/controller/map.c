/*
 * A small string -> pointer hash map with chaining, used by the controller's internals.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "controller/parts.h"

static size_t hash_str(const char *s)
{
	size_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

void *tfjob__map_get(const tfjob__map *m, const char *key)
{
	if (!m->cap)
		return NULL;
	size_t h = hash_str(key);
	for (tfjob__map_node *n = m->buckets[h & (m->cap - 1)]; n; n = n->next)
		if (n->hash == h && !strcmp(n->key, key))
			return n->val;
	return NULL;
}

static int grow(tfjob__map *m)
{
	size_t ncap = m->cap ? m->cap * 2 : 16;
	tfjob__map_node **nb = calloc(ncap, sizeof(*nb));
	if (!nb)
		return -1;
	for (size_t i = 0; i < m->cap; i++) {
		tfjob__map_node *n = m->buckets[i];
		while (n) {
			tfjob__map_node *next = n->next;
			n->next = nb[n->hash & (ncap - 1)];
			nb[n->hash & (ncap - 1)] = n;
			n = next;
		}
	}
	free(m->buckets);
	m->buckets = nb;
	m->cap = ncap;
	return 0;
}

int tfjob__map_put(tfjob__map *m, const char *key, void *val, void **old)
{
	if (old)
		*old = NULL;
	size_t h = hash_str(key);
	if (m->cap) {
		for (tfjob__map_node *n = m->buckets[h & (m->cap - 1)]; n; n = n->next)
			if (n->hash == h && !strcmp(n->key, key)) {
				if (old)
					*old = n->val;
				n->val = val;
				return 0;
			}
	}
	if (m->len + 1 > m->cap && grow(m))
		return -1;
	tfjob__map_node *n = malloc(sizeof(*n));
	if (!n)
		return -1;
	n->key = strdup(key);
	if (!n->key) {
		free(n);
		return -1;
	}
	n->val = val;
	n->hash = h;
	n->next = m->buckets[h & (m->cap - 1)];
	m->buckets[h & (m->cap - 1)] = n;
	m->len++;
	return 0;
}

void *tfjob__map_del(tfjob__map *m, const char *key)
{
	if (!m->cap)
		return NULL;
	size_t h = hash_str(key);
	for (tfjob__map_node **p = &m->buckets[h & (m->cap - 1)]; *p; p = &(*p)->next) {
		tfjob__map_node *n = *p;
		if (n->hash == h && !strcmp(n->key, key)) {
			void *v = n->val;
			*p = n->next;
			free(n->key);
			free(n);
			m->len--;
			return v;
		}
	}
	return NULL;
}

tfjob__map_node *tfjob__map_next(const tfjob__map *m, size_t *bucket, tfjob__map_node *it)
{
	if (it && it->next)
		return it->next;
	size_t b = it ? *bucket + 1 : 0;
	for (; b < m->cap; b++)
		if (m->buckets[b]) {
			*bucket = b;
			return m->buckets[b];
		}
	return NULL;
}

void tfjob__map_clear(tfjob__map *m, void (*free_val)(void *))
{
	for (size_t i = 0; i < m->cap; i++) {
		tfjob__map_node *n = m->buckets[i];
		while (n) {
			tfjob__map_node *next = n->next;
			if (free_val)
				free_val(n->val);
			free(n->key);
			free(n);
			n = next;
		}
	}
	free(m->buckets);
	m->buckets = NULL;
	m->cap = m->len = 0;
}
