/*
 * Nodes by the plan their records name: a node is found under its plan
 * whatever its labels say, moves when its record changes, and goes when the
 * record or the node goes. Records naming no plan are kept under "".
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "handover.h"
#include "node_owners.h"

static projection_node_t node_with(const char *name, projection_label_t *ann, size_t n)
{
	return (projection_node_t){ .meta = { .name = (char *)name }, .annotations = ann, .n_annotations = n };
}

static void test_nodes_follow_their_records(void **state)
{
	(void)state;
	node_owners_t o;
	node_owners_init(&o);
	projection_label_t gpu[] = { { HANDOVER_ANN_PLAN, "gpu" }, { HANDOVER_ANN_STEP, "draining" } };
	projection_label_t other[] = { { HANDOVER_ANN_PLAN, "other" }, { HANDOVER_ANN_STEP, "dra" } };
	projection_label_t stray[] = { { HANDOVER_ANN_STEP, "plugin-off" } };
	projection_label_t unrelated[] = { { "drashift.io/something-else", "x" } };

	projection_node_t n = node_with("a-0", gpu, 2);
	node_owners_set(&o, "a-0", &n);
	n = node_with("a-1", gpu, 2);
	node_owners_set(&o, "a-1", &n);
	n = node_with("b-0", stray, 1);
	node_owners_set(&o, "b-0", &n);
	n = node_with("c-0", unrelated, 1);
	node_owners_set(&o, "c-0", &n);
	assert_int_equal(strmap_size(node_owners_nodes(&o, "gpu")), 2);
	assert_string_equal(node_owners_of(&o, "b-0"), "");
	assert_null(node_owners_of(&o, "c-0")); /* no handover record: not held */

	/* The record moves to another plan; then the node is deleted. */
	n = node_with("a-0", other, 2);
	node_owners_set(&o, "a-0", &n);
	assert_string_equal(node_owners_of(&o, "a-0"), "other");
	assert_int_equal(strmap_size(node_owners_nodes(&o, "gpu")), 1);
	node_owners_set(&o, "a-1", NULL);
	assert_null(node_owners_nodes(&o, "gpu")); /* the plan's set goes with its last node */
	assert_null(node_owners_of(&o, "a-1"));

	/* Records removed (a release finished): the node is no longer held. */
	n = node_with("a-0", NULL, 0);
	node_owners_set(&o, "a-0", &n);
	assert_null(node_owners_nodes(&o, "other"));
	node_owners_free(&o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nodes_follow_their_records),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
