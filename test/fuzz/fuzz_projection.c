/*
 * libFuzzer target for the projection decoders.
 *
 * The input is tried as a watch event line, as a list page and as a bare
 * object, and every object that comes out is run through every decoder, so
 * each decoder also sees other kinds' objects. A decoder must either succeed
 * (the result is measured and freed; pods, claims and nodes are also packed
 * the way the stores keep them, and the block freed) or fail with a one-line
 * message and a zeroed output; anything else aborts, and the sanitizers catch
 * the rest.
 * Seed it with test/unit/fixtures/objects (copied: libFuzzer writes into the
 * first corpus directory).
 *
 *   CC=clang meson setup build-fuzz -Dfuzz=true -Db_sanitize=address,undefined -Db_lundef=false
 *   meson compile -C build-fuzz test/fuzz/fuzz_projection
 */
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "projection.h"

static void check_failed(const void *out, size_t n, const char *err)
{
	const unsigned char *b = out;
	if (err[0] == '\0' || strchr(err, '\n') != NULL)
		abort();
	for (size_t i = 0; i < n; i++) {
		if (b[i] != 0)
			abort();
	}
}

static void decode_all(const cJSON *obj)
{
	char err[256];
	union {
		projection_node_t node;
		projection_pod_t pod;
		projection_claim_t claim;
		projection_slice_t slice;
		projection_device_class_t cls;
		projection_event_t event;
	} u;
	volatile size_t total = 0;

#define TRY_DECODER(kind, field)                                                                  \
	do {                                                                                      \
		memset(&u, 0xa5, sizeof(u));                                                      \
		err[0] = '\0';                                                                    \
		if (projection_decode_##kind(obj, &u.field, err, sizeof(err)) == 0) {             \
			total += projection_size_##kind(&u.field);                                \
			projection_free_##kind(&u.field);                                         \
		} else {                                                                          \
			check_failed(&u.field, sizeof(u.field), err);                             \
		}                                                                                 \
	} while (0)

#define TRY_PACKED(kind, field)                                                                   \
	do {                                                                                      \
		memset(&u, 0xa5, sizeof(u));                                                      \
		err[0] = '\0';                                                                    \
		if (projection_decode_##kind(obj, &u.field, err, sizeof(err)) == 0) {             \
			strmap_t shared = STRMAP_INIT;                                            \
			void *packed = projection_pack_##kind(&u.field, &shared);                 \
			total += malloc_usable_size(packed);                                      \
			projection_free_packed_##kind(packed, &shared);                           \
			if (strmap_size(&shared) != 0)                                            \
				abort(); /* a reference not given back */                         \
			strmap_clear(&shared, NULL);                                              \
		}                                                                                 \
	} while (0)

	TRY_DECODER(node, node);
	TRY_PACKED(node, node);
	TRY_DECODER(pod, pod);
	TRY_PACKED(pod, pod);
	TRY_DECODER(claim, claim);
	TRY_PACKED(claim, claim);
	TRY_DECODER(slice, slice);
	TRY_DECODER(device_class, cls);
	TRY_DECODER(event, event);
#undef TRY_DECODER
#undef TRY_PACKED
	(void)total;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	char err[256];

	kube_object_event_t ev;
	memset(&ev, 0x5a, sizeof(ev));
	err[0] = '\0';
	if (kube_object_decode_event(text, size, &ev, err, sizeof(err)) == 0) {
		if (ev.object == NULL || ev.type > KUBE_OBJECT_EVENT_ERROR)
			abort();
		if (ev.type == KUBE_OBJECT_EVENT_BOOKMARK && ev.resource_version == NULL)
			abort();
		decode_all(ev.object);
		kube_object_event_free(&ev);
	} else {
		check_failed(&ev, sizeof(ev), err);
	}

	kube_object_list_t list;
	memset(&list, 0x5a, sizeof(list));
	err[0] = '\0';
	if (kube_object_decode_list(text, size, &list, err, sizeof(err)) == 0) {
		const cJSON *item;
		if (!cJSON_IsArray(list.items) || list.resource_version == NULL)
			abort();
		cJSON_ArrayForEach(item, list.items)
		{
			decode_all(item);
		}
		kube_object_list_free(&list);
	} else {
		check_failed(&list, sizeof(list), err);
	}

	cJSON *obj = cJSON_ParseWithLength(text, size);
	if (obj != NULL) {
		decode_all(obj);
		cJSON_Delete(obj);
	}
	return 0;
}
