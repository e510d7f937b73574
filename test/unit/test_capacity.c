/*
 * Capacity equivalence: the driver's slices counted in physical devices
 * (partitionable devices, several slices and pools, generations), and a
 * pool's capacity view in both units.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "capacity.h"

/* A slice of pool with n devices; counter_sets[i] the set device i consumes (NULL: none). */
static projection_slice_t slice(const char *pool, int64_t generation, int64_t count, char **devices,
				char **counter_sets, size_t n, size_t shared)
{
	return (projection_slice_t){ .driver = "gpu.example.com", .node_name = "gpu-1", .pool = (char *)pool,
				     .pool_generation = generation, .resource_slice_count = count, .devices = devices,
				     .counter_sets = counter_sets, .n_devices = n, .n_shared_counters = shared };
}

static char *eight[] = { "gpu-0", "gpu-1", "gpu-2", "gpu-3", "gpu-4", "gpu-5", "gpu-6", "gpu-7" };
/* Two GPUs, each published whole and as three MIG placements, all consuming the GPU's counter set. */
static char *partitions[] = { "gpu-0", "gpu-0-mig-1g-0", "gpu-0-mig-1g-1", "gpu-0-mig-3g-0",
			      "gpu-1", "gpu-1-mig-1g-0", "gpu-1-mig-1g-1", "gpu-1-mig-3g-0" };
static char *partition_sets[] = { "gpu-0-counters", "gpu-0-counters", "gpu-0-counters", "gpu-0-counters",
				  "gpu-1-counters", "gpu-1-counters", "gpu-1-counters", "gpu-1-counters" };

typedef struct {
	const char *what;
	projection_slice_t slices[4];
	size_t n;
	bool complete;
	int64_t listed, physical;
} count_row_t;

static void test_slices_count_physical_devices(void **state)
{
	(void)state;
	const count_row_t rows[] = {
		{ "one slice of whole GPUs", { slice("gpu-1", 1, 1, eight, NULL, 8, 0) }, 1, true, 8, 8 },
		{ "partitionable: a counter slice and a device slice",
		  { slice("gpu-1", 1, 2, NULL, NULL, 0, 2), slice("gpu-1", 1, 2, partitions, partition_sets, 8, 0) }, 2,
		  true, 8, 2 },
		{ "partitionable, the counter slice not seen yet",
		  { slice("gpu-1", 1, 2, partitions, partition_sets, 8, 0) }, 1, false, 8, 2 },
		{ "a pool in three slices, all there",
		  { slice("gpu-1", 3, 3, eight, NULL, 3, 0), slice("gpu-1", 3, 3, eight + 3, NULL, 3, 0),
		    slice("gpu-1", 3, 3, eight + 6, NULL, 2, 0) }, 3, true, 8, 8 },
		{ "a pool in three slices, one missing",
		  { slice("gpu-1", 3, 3, eight, NULL, 3, 0), slice("gpu-1", 3, 3, eight + 3, NULL, 3, 0) }, 2, false, 6, 6 },
		{ "an older generation is not counted",
		  { slice("gpu-1", 1, 1, eight, NULL, 8, 0), slice("gpu-1", 2, 1, eight, NULL, 4, 0) }, 2, true, 4, 4 },
		{ "two pools, each counted; the same counter set name in each is two devices",
		  { slice("a", 1, 1, partitions, partition_sets, 4, 0), slice("b", 1, 1, partitions, partition_sets, 4, 0) },
		  2, true, 8, 2 },
		{ "two pools, one incomplete",
		  { slice("a", 1, 1, eight, NULL, 4, 0), slice("b", 1, 2, eight, NULL, 4, 0) }, 2, false, 8, 8 },
		{ .what = "no slices" },
	};
	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		const projection_slice_t *ptrs[4];
		for (size_t i = 0; i < rows[r].n; i++)
			ptrs[i] = &rows[r].slices[i];
		capacity_slices_t c;
		capacity_count_slices(ptrs, rows[r].n, &c);
		if (c.complete != rows[r].complete || c.listed != rows[r].listed || c.physical != rows[r].physical ||
		    c.present != (rows[r].n > 0))
			fail_msg("%s: complete %d listed %lld physical %lld, want %d %lld %lld", rows[r].what, c.complete,
				 (long long)c.listed, (long long)c.physical, rows[r].complete, (long long)rows[r].listed,
				 (long long)rows[r].physical);
	}
}

static void test_an_allocated_partition_is_its_gpu(void **state)
{
	(void)state;
	projection_slice_t s[2] = { slice("gpu-1", 1, 2, NULL, NULL, 0, 2),
				    slice("gpu-1", 1, 2, partitions, partition_sets, 8, 0) };
	const projection_slice_t *ptrs[2] = { &s[0], &s[1] };
	assert_string_equal(capacity_physical_key(ptrs, 2, "gpu-1", "gpu-1-mig-3g-0"), "gpu-1-counters");
	assert_string_equal(capacity_physical_key(ptrs, 2, "gpu-1", "gpu-0"), "gpu-0-counters");
	assert_null(capacity_physical_key(ptrs, 2, "gpu-1", "gpu-9"));
	assert_null(capacity_physical_key(ptrs, 2, "other", "gpu-0"));
	projection_slice_t whole = slice("gpu-1", 1, 1, eight, NULL, 8, 0);
	const projection_slice_t *w = &whole;
	assert_string_equal(capacity_physical_key(&w, 1, "gpu-1", "gpu-3"), "gpu-3");
}

typedef struct {
	const char *what;
	capacity_node_t node;
	int64_t units[CAPACITY_STATES], devices[CAPACITY_STATES];
} view_row_t;

static void test_capacity_view_in_both_units(void **state)
{
	(void)state;
	const view_row_t rows[] = {
		{ "a legacy node shared 4 ways, 5 of 32 units in use: 2 GPUs busy",
		  { .total = 32, .allocated = 5, .units_per = 4, .devices_per = 1 }, { 27, 5, 0, 0 }, { 6, 2, 0, 0 } },
		{ "a DRA node, 3 of 8 devices allocated, 4 units each",
		  { .dra_owned = true, .total = 8, .allocated = 3, .units_per = 4, .devices_per = 1 }, { 20, 12, 0, 0 },
		  { 5, 3, 0, 0 } },
		{ "MIG: 9 instances on 2 GPUs, 1 in use", { .total = 9, .allocated = 1, .units_per = 9, .devices_per = 2 },
		  { 8, 1, 0, 0 }, { 1, 1, 0, 0 } },
		{ "cordoned by someone else", { .unavailable = true, .total = 8, .allocated = 2 }, { 0, 0, 8, 0 },
		  { 0, 0, 8, 0 } },
		{ "in handover", { .in_handover = true, .dra_owned = true, .total = 8, .units_per = 4, .devices_per = 1 },
		  { 0, 0, 0, 32 }, { 0, 0, 0, 8 } },
		{ "no mapping: one unit per device", { .total = 8, .allocated = 8 }, { 0, 8, 0, 0 }, { 0, 8, 0, 0 } },
	};
	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		capacity_view_t v = { 0 };
		capacity_view_add(&v, &rows[r].node);
		for (int s = 0; s < CAPACITY_STATES; s++)
			if (v.units[s] != rows[r].units[s] || v.devices[s] != rows[r].devices[s])
				fail_msg("%s: %s is %lld units / %lld devices, want %lld / %lld", rows[r].what,
					 capacity_state_name((capacity_state_t)s), (long long)v.units[s],
					 (long long)v.devices[s], (long long)rows[r].units[s], (long long)rows[r].devices[s]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_slices_count_physical_devices),
		cmocka_unit_test(test_an_allocated_partition_is_its_gpu),
		cmocka_unit_test(test_capacity_view_in_both_units),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
