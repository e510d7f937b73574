/*
 * A hash map from strings to pointers: the store of every cache and index.
 *
 * Open addressing with linear probing and backward-shift deletion, so the
 * table never fills with tombstones however many objects come and go. Values
 * are the caller's. Keys are copied (STRMAP_INIT), or borrowed
 * (STRMAP_INIT_BORROWED): then the map keeps the caller's pointer, which must
 * stay valid while the key is in the map, and a put that replaces a value
 * takes the new key pointer too, so a value may carry its own key and be
 * freed once it is replaced or removed (the store does this for its
 * projections).
 *
 * A slot is a key and a value, 16 bytes; the hash is computed again when
 * the table grows or a member moves. The load stays at most 3/4: for 20,000
 * cached objects the table is 32,768 slots, 26 bytes per object.
 */
#ifndef DRASHIFT_STRMAP_H
#define DRASHIFT_STRMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
	const char *key; /* NULL: empty slot */
	void *value;
} strmap_slot_t;

typedef struct {
	strmap_slot_t *slots;
	size_t cap; /* power of two, or 0 before the first put */
	size_t len;
	bool borrowed; /* keys are the caller's, not copies */
} strmap_t;

#define STRMAP_INIT { NULL, 0, 0, false }
#define STRMAP_INIT_BORROWED { NULL, 0, 0, true }

void *strmap_get(const strmap_t *m, const char *key);
/*
 * Insert or replace; returns the previous value, or NULL. A map with borrowed
 * keys keeps key itself, also when it replaces a value.
 */
void *strmap_put(strmap_t *m, const char *key, void *value);
/* Remove; returns the value, or NULL when absent. */
void *strmap_remove(strmap_t *m, const char *key);
size_t strmap_size(const strmap_t *m);
/* Free the table (and copied keys); free_value (may be NULL) is called on every value. */
void strmap_clear(strmap_t *m, void (*free_value)(void *value));

/*
 * Iterate: size_t it = 0; while (strmap_next(m, &it, &key, &value)) ...
 * The map must not change during the iteration.
 */
bool strmap_next(const strmap_t *m, size_t *it, const char **key, void **value);

/* Bytes the table itself owns (slots and key copies, not borrowed keys), for memory accounting. */
size_t strmap_bytes(const strmap_t *m);

#endif
