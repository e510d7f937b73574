#include "strmap.h"

#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

/* FNV-1a: keys are short object names; fast and well spread. */
static uint64_t strmap_hash(const char *key)
{
	uint64_t h = 0xcbf29ce484222325u;
	for (const unsigned char *p = (const unsigned char *)key; *p != '\0'; p++) {
		h ^= *p;
		h *= 0x100000001b3u;
	}
	return h;
}

static size_t strmap_home(const strmap_t *m, const char *key)
{
	return (size_t)strmap_hash(key) & (m->cap - 1);
}

static size_t strmap_find(const strmap_t *m, const char *key)
{
	size_t mask = m->cap - 1;
	size_t i = strmap_home(m, key);
	while (m->slots[i].key != NULL) {
		if (strcmp(m->slots[i].key, key) == 0)
			return i;
		i = (i + 1) & mask;
	}
	return i;
}

static void strmap_grow(strmap_t *m)
{
	size_t old_cap = m->cap;
	strmap_slot_t *old = m->slots;
	m->cap = old_cap ? old_cap * 2 : 16;
	m->slots = xcalloc(m->cap, sizeof(*m->slots));
	for (size_t i = 0; i < old_cap; i++) {
		if (old[i].key == NULL)
			continue;
		size_t j = strmap_home(m, old[i].key);
		while (m->slots[j].key != NULL)
			j = (j + 1) & (m->cap - 1);
		m->slots[j] = old[i];
	}
	free(old);
}

void *strmap_get(const strmap_t *m, const char *key)
{
	if (m->len == 0)
		return NULL;
	size_t i = strmap_find(m, key);
	return m->slots[i].key ? m->slots[i].value : NULL;
}

void *strmap_put(strmap_t *m, const char *key, void *value)
{
	/* Keep the load at most 3/4: linear probes stay short. */
	if ((m->len + 1) * 4 > m->cap * 3)
		strmap_grow(m);
	size_t i = strmap_find(m, key);
	if (m->slots[i].key != NULL) {
		void *old = m->slots[i].value;
		m->slots[i].value = value;
		return old;
	}
	m->slots[i] = (strmap_slot_t){ .key = xstrdup(key), .value = value };
	m->len++;
	return NULL;
}

/*
 * Backward-shift deletion: move later members of the probe run into the hole
 * when their home slot allows it, so lookups never need tombstones.
 */
static void *strmap_remove_slot(strmap_t *m, size_t i)
{
	size_t mask = m->cap - 1;
	void *value = m->slots[i].value;
	free(m->slots[i].key);
	m->slots[i].key = NULL;
	m->len--;
	size_t hole = i;
	for (size_t j = (i + 1) & mask; m->slots[j].key != NULL; j = (j + 1) & mask) {
		size_t home = strmap_home(m, m->slots[j].key);
		/* j may move into the hole when home is not cyclically in (hole, j]. */
		bool stays = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
		if (!stays) {
			m->slots[hole] = m->slots[j];
			m->slots[j].key = NULL;
			hole = j;
		}
	}
	return value;
}

void *strmap_remove(strmap_t *m, const char *key)
{
	if (m->len == 0)
		return NULL;
	size_t i = strmap_find(m, key);
	return m->slots[i].key != NULL ? strmap_remove_slot(m, i) : NULL;
}

size_t strmap_size(const strmap_t *m)
{
	return m->len;
}

void strmap_clear(strmap_t *m, void (*free_value)(void *value))
{
	for (size_t i = 0; i < m->cap; i++) {
		if (m->slots[i].key == NULL)
			continue;
		if (free_value)
			free_value(m->slots[i].value);
		free(m->slots[i].key);
	}
	free(m->slots);
	*m = (strmap_t)STRMAP_INIT;
}

bool strmap_next(const strmap_t *m, size_t *it, const char **key, void **value)
{
	while (*it < m->cap) {
		size_t i = (*it)++;
		if (m->slots[i].key != NULL) {
			if (key)
				*key = m->slots[i].key;
			if (value)
				*value = m->slots[i].value;
			return true;
		}
	}
	return false;
}

size_t strmap_bytes(const strmap_t *m)
{
	size_t n = m->slots ? malloc_usable_size(m->slots) : 0;
	for (size_t i = 0; i < m->cap; i++)
		if (m->slots[i].key)
			n += malloc_usable_size(m->slots[i].key);
	return n;
}

const char *strmap_intern(strmap_t *m, const char *s)
{
	if ((m->len + 1) * 4 > m->cap * 3)
		strmap_grow(m);
	size_t i = strmap_find(m, s);
	if (m->slots[i].key == NULL) {
		m->slots[i] = (strmap_slot_t){ .key = xstrdup(s), .value = NULL };
		m->len++;
	}
	m->slots[i].value = (void *)((uintptr_t)m->slots[i].value + 1);
	return m->slots[i].key;
}

const char *strmap_interned(const strmap_t *m, const char *s)
{
	return m->len == 0 ? NULL : m->slots[strmap_find(m, s)].key;
}

void strmap_unintern(strmap_t *m, const char *s)
{
	if (m->len == 0)
		return;
	size_t i = strmap_find(m, s);
	if (m->slots[i].key == NULL)
		return;
	uintptr_t refs = (uintptr_t)m->slots[i].value;
	if (refs > 1)
		m->slots[i].value = (void *)(refs - 1);
	else
		strmap_remove_slot(m, i); /* s may be the copy it frees: not read again */
}
