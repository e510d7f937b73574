/*
 * A hash map from strings to pointers: the store of every cache and index.
 *
 * Open addressing with linear probing and backward-shift deletion, so the
 * table never fills with tombstones however many objects come and go. Keys are
 * copied; values are the caller's.
 *
 * A slot is a key and a value, 16 bytes; the hash is computed again when
 * the table grows or a member moves. The load stays at most 3/4, so a map
 * of n members costs 21 to 43 bytes of table per member, plus its key.
 */
#ifndef DRASHIFT_STRMAP_H
#define DRASHIFT_STRMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
	char *key; /* NULL: empty slot */
	void *value;
} strmap_slot_t;

typedef struct {
	strmap_slot_t *slots;
	size_t cap; /* power of two, or 0 before the first put */
	size_t len;
} strmap_t;

#define STRMAP_INIT { NULL, 0, 0 }

void *strmap_get(const strmap_t *m, const char *key);
/* Insert or replace; returns the previous value, or NULL. */
void *strmap_put(strmap_t *m, const char *key, void *value);
/* Remove; returns the value, or NULL when absent. */
void *strmap_remove(strmap_t *m, const char *key);
size_t strmap_size(const strmap_t *m);
/* Free the table; free_value (may be NULL) is called on every value. */
void strmap_clear(strmap_t *m, void (*free_value)(void *value));

/*
 * Iterate: size_t it = 0; while (strmap_next(m, &it, &key, &value)) ...
 * The map must not change during the iteration.
 */
bool strmap_next(const strmap_t *m, size_t *it, const char **key, void **value);

/*
 * A map used as a pool of shared strings (as the stores use one for strings
 * that thousands of cached objects repeat: namespaces, node names, resource
 * names): strmap_intern returns the map's own copy of s, and counts a
 * reference to it in its value; strmap_unintern drops one (s may be that
 * copy) and frees the copy with the last. Use such a map only through these
 * two and strmap_size, strmap_bytes and strmap_clear.
 */
const char *strmap_intern(strmap_t *m, const char *s);
void strmap_unintern(strmap_t *m, const char *s);
/* The pool's copy of s, NULL when s is not in it; counts no reference. Copies compare by address. */
const char *strmap_interned(const strmap_t *m, const char *s);

/* Bytes the table itself owns (slots and key copies), for memory accounting. */
size_t strmap_bytes(const strmap_t *m);

#endif
