/*
 * Nodes by pool: which pools of which MigrationPlans select each node. A
 * plan's reconcile takes its pools' members and its conflicts from this
 * index, so it must follow every node relabel and every plan change (a
 * selector edited, a plan added or deleted) exactly: a stale entry hands a
 * node over for a pool that no longer selects it, or misses a node selected
 * by two pools, which must be left alone.
 *
 * The stores are fed watch events as the reflectors would; their change
 * callbacks drive the index as the plan controller's do.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "plan_object.h"
#include "pool_index.h"
#include "kinds.h"
#include "store.h"
#include "xalloc.h"

#define N_NODES 3

typedef struct {
	store_t nodes;
	store_t plans;
	pool_index_t idx;
	bool rebuilt; /* what the last plan change returned */
	bool node_changed; /* what the last node change returned */
} fixture_t;

static void follow_nodes(const void *old, const void *new, void *data)
{
	fixture_t *f = data;
	const projection_node_t *node = new ? new : old;
	f->node_changed = pool_index_set_node(&f->idx, &f->plans, node->meta.name, new);
}

static void follow_plans(const void *old, const void *new, void *data)
{
	fixture_t *f = data;
	f->rebuilt = pool_index_plan_changed(&f->idx, &f->plans, &f->nodes, old, new);
}

static void fixture_init(fixture_t *f)
{
	memset(f, 0, sizeof(*f));
	store_init(&f->nodes, &kinds_nodes, follow_nodes, f);
	store_init(&f->plans, &store_kind_plans, follow_plans, f);
	pool_index_init(&f->idx, plan_selector_matches); /* the controller's matcher */
}

static void fixture_free(fixture_t *f)
{
	store_free(&f->nodes);
	store_free(&f->plans);
	pool_index_free(&f->idx);
}

static void apply_line(store_t *s, char *line)
{
	char *new_rv;
	assert_int_equal(store_apply_event(s, line, strlen(line), &new_rv), STORE_APPLIED);
	free(new_rv);
	free(line);
}

/* A node; pool_label (NULL: none) is its drashift.io/pool label. */
static void node_event(fixture_t *f, const char *type, const char *name, const char *rv, const char *pool_label)
{
	char *labels = pool_label ? xasprintf(",\"labels\":{\"drashift.io/pool\":\"%s\"}", pool_label) : xstrdup("");
	apply_line(&f->nodes, xasprintf("{\"type\":\"%s\",\"object\":{\"kind\":\"Node\",\"apiVersion\":\"v1\","
					"\"metadata\":{\"name\":\"%s\",\"resourceVersion\":\"%s\"%s}}}",
					type, name, rv, labels));
	free(labels);
}

/*
 * A plan; pools is "name=label,...": each pool selects drashift.io/pool=label.
 * NULL pools: a plan without spec.pools, which is invalid.
 */
static void plan_event(fixture_t *f, const char *type, const char *name, const char *rv, const char *pools)
{
	char *list = xstrdup("");
	for (const char *p = pools; p && *p;) {
		const char *eq = strchr(p, '='), *end = strchr(p, ',');
		if (end == NULL)
			end = p + strlen(p);
		assert_true(eq != NULL && eq < end);
		char *next = xasprintf("%s%s{\"name\":\"%.*s\",\"nodeSelector\":{\"matchLabels\":"
				       "{\"drashift.io/pool\":\"%.*s\"}}}",
				       list, list[0] ? "," : "", (int)(eq - p), p, (int)(end - eq - 1), eq + 1);
		free(list);
		list = next;
		p = *end ? end + 1 : end;
	}
	char *pools_field = pools ? xasprintf(",\"pools\":[%s]", list) : xstrdup("");
	apply_line(&f->plans, xasprintf("{\"type\":\"%s\",\"object\":{\"apiVersion\":\"drashift.io/v1alpha1\","
					"\"kind\":\"MigrationPlan\",\"metadata\":{\"name\":\"%s\",\"resourceVersion\":"
					"\"%s\"},\"spec\":{\"deviceClassNames\":[\"gpu.example.com\"],\"driver\":"
					"\"gpu.example.com\",\"extendedResource\":\"example.com/gpu\"%s}}}",
					type, name, rv, pools_field));
	free(pools_field);
	free(list);
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A pool's members, which must be sorted by name: the member named node, NULL when it is not one. */
static const pool_index_member_t *pool_member(pool_index_t *idx, const char *plan, const char *pool, const char *node)
{
	const pool_index_member_t *members, *found = NULL;
	size_t n = pool_index_members(idx, plan, pool, &members);
	for (size_t i = 0; i < n; i++) {
		if (i > 0 && strcmp(members[i - 1].node, members[i].node) >= 0)
			fail_msg("pool %s/%s: %s listed before %s", plan, pool, members[i - 1].node, members[i].node);
		if (strcmp(members[i].node, node) == 0)
			found = &members[i];
	}
	return found;
}

/*
 * What selects a node: "plan/pool" sorted, space-joined ("" for nothing).
 * Each of them must also list the node among its members.
 */
static char *node_pools(pool_index_t *idx, const char *node)
{
	const pool_index_node_t *n = pool_index_node(idx, node);
	size_t count = n ? n->n : 0;
	char **names = xcalloc(count + 1, sizeof(char *));
	for (size_t i = 0; i < count; i++) {
		names[i] = xasprintf("%s/%s", n->matches[i].plan, n->matches[i].pool);
		const pool_index_member_t *m = pool_member(idx, n->matches[i].plan, n->matches[i].pool, node);
		assert_non_null(m);
		assert_ptr_equal(m->matches, n);
	}
	qsort(names, count, sizeof(char *), str_cmp);
	char *joined = xstrdup("");
	for (size_t i = 0; i < count; i++) {
		char *next = xasprintf("%s%s%s", joined, i ? " " : "", names[i]);
		free(joined);
		joined = next;
		free(names[i]);
	}
	free(names);
	return joined;
}

/* Members of every pool, counted: equal to the matches of every node when nothing stale is left. */
static size_t member_count(pool_index_t *idx)
{
	size_t n_keys = 0, it = 0, total = 0;
	const char *key;
	char **keys = xcalloc(strmap_size(&idx->pools) + 1, sizeof(char *));
	while (strmap_next(&idx->pools, &it, &key, NULL))
		keys[n_keys++] = xstrdup(key); /* "plan\x1fpool" */
	for (size_t i = 0; i < n_keys; i++) {
		char *sep = strchr(keys[i], '\x1f');
		assert_non_null(sep);
		*sep = '\0';
		const pool_index_member_t *members;
		total += pool_index_members(idx, keys[i], sep + 1, &members);
		free(keys[i]);
	}
	free(keys);
	return total;
}

static size_t match_count(const pool_index_t *idx)
{
	size_t total = 0, it = 0;
	void *v;
	while (strmap_next(&idx->nodes, &it, NULL, &v))
		total += ((const pool_index_node_t *)v)->n;
	return total;
}

typedef enum { NODE, PLAN } object_t;

typedef struct {
	object_t what;
	const char *type;
	const char *name;
	const char *rv;
	const char *spec;    /* node: its pool label; plan: its pools (see plan_event) */
	int changed;         /* plan: whether the index is worked out again; node: whether the pools that select it did */
	const char *want[N_NODES]; /* what selects n1, n2, n3 afterwards */
} pool_step_t;

static void test_pool_index_follows_nodes_and_plans(void **state)
{
	(void)state;
	static const pool_step_t steps[] = {
		/* what  type        name      rv   spec        changed  n1        n2        n3 */
		{ PLAN, "ADDED", "e2e", "1", "a=a,b=b", 1, { "", "", "" } },
		{ NODE, "ADDED", "n1", "2", "a", 1, { "e2e/a", "", "" } },
		{ NODE, "ADDED", "n2", "3", "b", 1, { "e2e/a", "e2e/b", "" } },
		{ NODE, "ADDED", "n3", "4", NULL, 0, { "e2e/a", "e2e/b", "" } },
		/* a relabel: n1 leaves pool a and joins pool b */
		{ NODE, "MODIFIED", "n1", "5", "b", 1, { "e2e/b", "e2e/b", "" } },
		/* a selector edited: pool b now selects label c */
		{ PLAN, "MODIFIED", "e2e", "6", "a=a,b=c", 1, { "", "", "" } },
		{ NODE, "MODIFIED", "n3", "7", "c", 1, { "", "", "e2e/b" } },
		{ NODE, "MODIFIED", "n1", "8", "a", 1, { "e2e/a", "", "e2e/b" } },
		/* a node's status written, its labels as they were: the same pools, the index untouched */
		{ NODE, "MODIFIED", "n1", "9", "a", 0, { "e2e/a", "", "e2e/b" } },
		/* a status write (same pools): nothing to work out again */
		{ PLAN, "MODIFIED", "e2e", "10", "a=a,b=c", 0, { "e2e/a", "", "e2e/b" } },
		/* a second plan whose pool selects n3 too */
		{ PLAN, "ADDED", "overlap", "11", "same=c", 1, { "e2e/a", "", "e2e/b overlap/same" } },
		/* an invalid plan selects nothing */
		{ PLAN, "ADDED", "broken", "12", NULL, 0, { "e2e/a", "", "e2e/b overlap/same" } },
		{ PLAN, "DELETED", "e2e", "13", "a=a,b=c", 1, { "", "", "overlap/same" } },
		{ PLAN, "DELETED", "broken", "14", NULL, 0, { "", "", "overlap/same" } },
		{ NODE, "DELETED", "n3", "15", "c", 1, { "", "", "" } },
	};
	static const char *const nodes[N_NODES] = { "n1", "n2", "n3" };
	fixture_t f;
	fixture_init(&f);
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		const pool_step_t *st = &steps[i];
		f.rebuilt = f.node_changed = false;
		uint64_t version = f.idx.version;
		if (st->what == NODE)
			node_event(&f, st->type, st->name, st->rv, st->spec);
		else
			plan_event(&f, st->type, st->name, st->rv, st->spec);
		bool changed = st->what == NODE ? f.node_changed : f.rebuilt;
		if (changed != (st->changed == 1))
			fail_msg("step %zu (%s %s): changed: %d, want %d", i, st->type, st->name, changed, st->changed);
		/* What the plan controller's SLO views go by: a new version exactly when some node's pools changed. */
		if ((f.idx.version != version) != (st->changed == 1))
			fail_msg("step %zu (%s %s): version %s", i, st->type, st->name,
				 f.idx.version != version ? "changed" : "unchanged");
		for (size_t n = 0; n < N_NODES; n++) {
			char *got = node_pools(&f.idx, nodes[n]);
			if (strcmp(got, st->want[n]) != 0)
				fail_msg("step %zu (%s %s): %s is selected by \"%s\", want \"%s\"", i, st->type, st->name,
					 nodes[n], got, st->want[n]);
			free(got);
		}
		assert_int_equal(member_count(&f.idx), match_count(&f.idx));
	}
	assert_int_equal(strmap_size(&f.idx.pools), 0); /* no empty pool left behind */
	fixture_free(&f);
}

/* A pool's members come sorted by name, and follow nodes joining and leaving between two reads. */
static void test_pool_index_members_sorted(void **state)
{
	(void)state;
	fixture_t f;
	fixture_init(&f);
	plan_event(&f, "ADDED", "e2e", "1", "a=a");
	const char *order[] = { "n3", "n10", "n1", "n2" };
	for (size_t i = 0; i < 4; i++)
		node_event(&f, "ADDED", order[i], "2", "a");
	const pool_index_member_t *members;
	const char *want[] = { "n1", "n10", "n2", "n3" };
	assert_int_equal(pool_index_members(&f.idx, "e2e", "a", &members), 4);
	for (size_t i = 0; i < 4; i++)
		assert_string_equal(members[i].node, want[i]);
	node_event(&f, "MODIFIED", "n10", "3", "b"); /* leaves */
	node_event(&f, "DELETED", "n2", "4", "a");
	node_event(&f, "ADDED", "n0", "5", "a");
	const char *after[] = { "n0", "n1", "n3" };
	assert_int_equal(pool_index_members(&f.idx, "e2e", "a", &members), 3);
	for (size_t i = 0; i < 3; i++) {
		assert_string_equal(members[i].node, after[i]);
		assert_ptr_equal(members[i].matches, pool_index_node(&f.idx, after[i]));
	}
	assert_int_equal(pool_index_members(&f.idx, "e2e", "b", &members), 0);
	assert_null(members);
	fixture_free(&f);
}

/* A node selected by two pools (of two plans, or of one) is a conflict that names both. */
typedef struct {
	const char *plans[2][2]; /* name, pools (see plan_event); NULL name: none */
	const char *ask;         /* the plan whose reconcile asks */
	bool conflict;
	const char *mine;  /* "plan/pool" */
	const char *other; /* "plan/pool" */
} conflict_case_t;

static void test_pool_index_reports_conflicts(void **state)
{
	(void)state;
	static const conflict_case_t cases[] = {
		{ { { "e2e", "a=x" }, { "overlap", "same=x" } }, "overlap", true, "overlap/same", "e2e/a" },
		{ { { "e2e", "a=x" }, { "overlap", "same=x" } }, "e2e", true, "e2e/a", "overlap/same" },
		{ { { "twin", "p=y,q=x,r=x" }, { NULL, NULL } }, "twin", true, "twin/q", "twin/r" },
		{ { { "e2e", "a=x" }, { "other", "b=y" } }, "e2e", false, "e2e/a", NULL },
	};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		const conflict_case_t *cs = &cases[c];
		fixture_t f;
		fixture_init(&f);
		node_event(&f, "ADDED", "n1", "1", "x");
		for (int p = 0; p < 2 && cs->plans[p][0]; p++)
			plan_event(&f, "ADDED", cs->plans[p][0], "2", cs->plans[p][1]);
		const pool_index_node_t *n = pool_index_node(&f.idx, "n1");
		assert_non_null(n);
		const pool_index_match_t *mine, *other;
		bool conflict = pool_index_conflict(n, cs->ask, &mine, &other);
		if (conflict != cs->conflict)
			fail_msg("case %zu: conflict %d, want %d", c, conflict, cs->conflict);
		char *got_mine = mine ? xasprintf("%s/%s", mine->plan, mine->pool) : xstrdup("");
		char *got_other = other ? xasprintf("%s/%s", other->plan, other->pool) : xstrdup("");
		assert_string_equal(got_mine, cs->mine);
		assert_string_equal(got_other, cs->other ? cs->other : "");
		free(got_mine);
		free(got_other);
		fixture_free(&f);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pool_index_follows_nodes_and_plans),
		cmocka_unit_test(test_pool_index_reports_conflicts),
		cmocka_unit_test(test_pool_index_members_sorted),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
