/*
 * The verbs that steer a plan: pause, resume, promote, rollback, acknowledge
 * and abort. Each is a server-side apply of the plan's spec as field manager
 * kubectl-drashift, then one line per field it changed.
 *
 * Server-side apply removes a field its manager stops naming, so every apply
 * names all the steering fields (spec.paused, spec.rollback, spec.promote,
 * spec.acknowledgedBreach) with the values read just before: "resume" after
 * "rollback" must not drop the rollback. The read's resourceVersion goes with
 * the apply, so a change made in between is not overwritten: the verb reads
 * again and decides again.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "kube_api.h"
#include "xalloc.h"

#define CLI_SPEC_ATTEMPTS 5

/* The steering fields, as the change lines name them. */
static const char *const cli_spec_fields[][2] = {
	{ "paused", NULL },   { "rollback", "all" }, { "rollback", "pools" },
	{ "promote", "pools" }, { "acknowledgedBreach", NULL },
};
#define CLI_SPEC_N_FIELDS (sizeof(cli_spec_fields) / sizeof(cli_spec_fields[0]))

/*
 * An edit of the steering fields: spec holds them as read; the edit changes
 * them in place. Returns 0, or an exit code after an error line.
 */
typedef int (*cli_spec_edit_t)(struct cli *c, const cJSON *plan, cJSON *spec, const char *pool);

static const cJSON *cli_spec_field(const cJSON *spec, size_t f)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(spec, cli_spec_fields[f][0]);
	return cli_spec_fields[f][1] ? cJSON_GetObjectItemCaseSensitive(v, cli_spec_fields[f][1]) : v;
}

/* The steering fields of the plan's spec, copied. */
static cJSON *cli_spec_steering(const cJSON *plan)
{
	const cJSON *spec = cJSON_GetObjectItemCaseSensitive(plan, "spec");
	cJSON *out = cJSON_CreateObject();
	static const char *const top[] = { "paused", "rollback", "promote", "acknowledgedBreach" };
	for (size_t i = 0; i < sizeof(top) / sizeof(top[0]); i++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(spec, top[i]);
		if (v)
			cJSON_AddItemToObject(out, top[i], cJSON_Duplicate(v, true));
	}
	return out;
}

/* The object (or array) spec.<key>, created when missing. */
static cJSON *cli_spec_obj(cJSON *parent, const char *key, bool array)
{
	cJSON *v = cJSON_GetObjectItemCaseSensitive(parent, key);
	if (v == NULL || (array ? !cJSON_IsArray(v) : !cJSON_IsObject(v))) {
		cJSON_DeleteItemFromObjectCaseSensitive(parent, key);
		v = array ? cJSON_AddArrayToObject(parent, key) : cJSON_AddObjectToObject(parent, key);
	}
	return v;
}

/* spec.<key>.pools gains name (a set: no duplicates). */
static void cli_spec_add_pool(cJSON *spec, const char *key, const char *name)
{
	cJSON *set = cli_spec_obj(cli_spec_obj(spec, key, false), "pools", true);
	if (!cli_has_string(set, name))
		cJSON_AddItemToArray(set, cJSON_CreateString(name));
}

/* spec.<key>.pools loses name, or every name when name is NULL (the list stays, empty, to own it). */
static void cli_spec_drop_pool(cJSON *spec, const char *key, const char *name)
{
	cJSON *obj = cJSON_GetObjectItemCaseSensitive(spec, key);
	cJSON *set = cJSON_GetObjectItemCaseSensitive(obj, "pools");
	if (!cJSON_IsArray(set))
		return;
	for (int i = cJSON_GetArraySize(set) - 1; i >= 0; i--) {
		const cJSON *v = cJSON_GetArrayItem(set, i);
		if (name == NULL || (cJSON_IsString(v) && strcmp(v->valuestring, name) == 0))
			cJSON_DeleteItemFromArray(set, i);
	}
}

static void cli_spec_set_bool(cJSON *parent, const char *key, bool value)
{
	cJSON_DeleteItemFromObjectCaseSensitive(parent, key);
	cJSON_AddBoolToObject(parent, key, value);
}

/* Does the plan's spec.pools list name? */
static bool cli_spec_has_pool(const cJSON *plan, const char *name)
{
	const cJSON *pools = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(plan, "spec"), "pools");
	const cJSON *p;
	cJSON_ArrayForEach(p, pools)
	{
		const cJSON *n = cJSON_GetObjectItemCaseSensitive(p, "name");
		if (cJSON_IsString(n) && strcmp(n->valuestring, name) == 0)
			return true;
	}
	return false;
}

static int cli_spec_need_pool(struct cli *c, const cJSON *plan, const char *pool)
{
	if (cli_spec_has_pool(plan, pool))
		return 0;
	return cli_fail(c, "the plan has no pool %s (see spec.pools)", pool);
}

static int cli_edit_pause(struct cli *c, const cJSON *plan, cJSON *spec, const char *pool)
{
	(void)c, (void)plan, (void)pool;
	cli_spec_set_bool(spec, "paused", true);
	return 0;
}

static int cli_edit_resume(struct cli *c, const cJSON *plan, cJSON *spec, const char *pool)
{
	(void)c, (void)plan, (void)pool;
	cli_spec_set_bool(spec, "paused", false);
	return 0;
}

static int cli_edit_promote(struct cli *c, const cJSON *plan, cJSON *spec, const char *pool)
{
	if (cli_spec_need_pool(c, plan, pool) != 0)
		return 1;
	cli_spec_add_pool(spec, "promote", pool);
	return 0;
}

/* A pool rolled back bakes again if it is migrated again: its promotion goes. */
static int cli_edit_rollback(struct cli *c, const cJSON *plan, cJSON *spec, const char *pool)
{
	if (cli_spec_need_pool(c, plan, pool) != 0)
		return 1;
	cli_spec_add_pool(spec, "rollback", pool);
	cli_spec_drop_pool(spec, "promote", pool);
	return 0;
}

static int cli_edit_abort(struct cli *c, const cJSON *plan, cJSON *spec, const char *pool)
{
	(void)c, (void)plan, (void)pool;
	cli_spec_set_bool(cli_spec_obj(spec, "rollback", false), "all", true);
	cli_spec_drop_pool(spec, "promote", NULL);
	return 0;
}

/* The breach recorded in status.breach is the one acknowledged; without one there is nothing to lift. */
static int cli_edit_acknowledge(struct cli *c, const cJSON *plan, cJSON *spec, const char *pool)
{
	(void)pool;
	const cJSON *breach = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(plan, "status"), "breach");
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(breach, "id");
	if (!cJSON_IsString(id) || id->valuestring[0] == '\0')
		return cli_fail(c, "nothing to acknowledge: status.breach records no breach (the plan is not frozen)");
	cJSON_DeleteItemFromObjectCaseSensitive(spec, "acknowledgedBreach");
	cJSON_AddStringToObject(spec, "acknowledgedBreach", id->valuestring);
	return 0;
}

static void cli_spec_value_text(const cJSON *v, char *buf, size_t len)
{
	if (v == NULL) {
		snprintf(buf, len, "(unset)");
		return;
	}
	char *s = cJSON_PrintUnformatted(v);
	snprintf(buf, len, "%s", s);
	free(s);
}

/* One line per steering field that differs between before and after. Returns how many. */
static size_t cli_spec_print_changes(struct cli *c, const char *name, const cJSON *before, const cJSON *after)
{
	size_t n = 0;
	for (size_t f = 0; f < CLI_SPEC_N_FIELDS; f++) {
		const cJSON *b = cli_spec_field(before, f), *a = cli_spec_field(after, f);
		if ((b == NULL && a == NULL) || (b && a && cJSON_Compare(b, a, true)))
			continue;
		char from[256], to[256], field[64];
		cli_spec_value_text(b, from, sizeof(from));
		cli_spec_value_text(a, to, sizeof(to));
		snprintf(field, sizeof(field), "spec.%s%s%s", cli_spec_fields[f][0], cli_spec_fields[f][1] ? "." : "",
			 cli_spec_fields[f][1] ? cli_spec_fields[f][1] : "");
		fprintf(c->out, "migrationplan.drashift.io/%s: %s %s -> %s\n", name, field, from, to);
		n++;
	}
	return n;
}

/* The apply: apiVersion, kind, name and resourceVersion (as read), and the steering fields. */
static cJSON *cli_spec_apply_object(const char *name, const cJSON *plan, const cJSON *spec)
{
	cJSON *obj = cJSON_CreateObject();
	cJSON_AddStringToObject(obj, "apiVersion", CLI_PLAN_API);
	cJSON_AddStringToObject(obj, "kind", "MigrationPlan");
	cJSON *md = cJSON_AddObjectToObject(obj, "metadata");
	cJSON_AddStringToObject(md, "name", name);
	const cJSON *rv = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(plan, "metadata"),
							   "resourceVersion");
	if (cJSON_IsString(rv))
		cJSON_AddStringToObject(md, "resourceVersion", rv->valuestring);
	cJSON_AddItemToObject(obj, "spec", cJSON_Duplicate(spec, true));
	return obj;
}

/* Read, edit, apply (again on a conflict), print the change. */
static int cli_spec_change(struct cli *c, const char *name, const char *pool, cli_spec_edit_t edit)
{
	char *path = kube_path(CLI_PLAN_API, CLI_PLAN_RESOURCE, NULL, name, NULL);
	int rc = 1;
	for (int attempt = 0; attempt < CLI_SPEC_ATTEMPTS; attempt++) {
		cJSON *plan = cli_get_plan(c, name);
		if (plan == NULL)
			break;
		cJSON *before = cli_spec_steering(plan);
		cJSON *spec = cJSON_Duplicate(before, true);
		rc = edit(c, plan, spec, pool);
		bool conflict = false;
		if (rc == 0 && cJSON_Compare(before, spec, true)) {
			fprintf(c->out, "migrationplan.drashift.io/%s: unchanged (the spec already says so)\n", name);
		} else if (rc == 0) {
			cJSON *obj = cli_spec_apply_object(name, plan, spec);
			cJSON *stored = cli_apply(c, path, obj, &conflict);
			cJSON_Delete(obj);
			if (stored) {
				cJSON *after = cli_spec_steering(stored);
				if (cli_spec_print_changes(c, name, before, after) == 0)
					fprintf(c->out, "migrationplan.drashift.io/%s: unchanged\n", name);
				cJSON_Delete(after);
				cJSON_Delete(stored);
			} else if (!conflict) {
				rc = 1;
			}
		}
		cJSON_Delete(before);
		cJSON_Delete(spec);
		cJSON_Delete(plan);
		if (!conflict)
			break;
		if (attempt + 1 == CLI_SPEC_ATTEMPTS)
			rc = cli_fail(c, "the plan changed each time it was about to be written (%d tries); try again",
				      CLI_SPEC_ATTEMPTS);
	}
	free(path);
	return rc;
}

/* PLAN, or PLAN POOL: the verb's positional arguments, no flags. */
static int cli_spec_verb(struct cli *c, int argc, char **argv, bool wants_pool, cli_spec_edit_t edit)
{
	int want = wants_pool ? 3 : 2;
	for (int i = 1; i < argc; i++)
		if (argv[i][0] == '-')
			return cli_usage_error(c, "unknown flag '%s'", argv[i]);
	if (argc != want)
		return cli_usage_error(c, argc < want ? "missing argument" : "too many arguments");
	return cli_spec_change(c, argv[1], wants_pool ? argv[2] : NULL, edit);
}

int cli_verb_pause(struct cli *c, int argc, char **argv)
{
	return cli_spec_verb(c, argc, argv, false, cli_edit_pause);
}

int cli_verb_resume(struct cli *c, int argc, char **argv)
{
	return cli_spec_verb(c, argc, argv, false, cli_edit_resume);
}

int cli_verb_promote(struct cli *c, int argc, char **argv)
{
	return cli_spec_verb(c, argc, argv, true, cli_edit_promote);
}

int cli_verb_rollback(struct cli *c, int argc, char **argv)
{
	return cli_spec_verb(c, argc, argv, true, cli_edit_rollback);
}

int cli_verb_acknowledge(struct cli *c, int argc, char **argv)
{
	return cli_spec_verb(c, argc, argv, false, cli_edit_acknowledge);
}

int cli_verb_abort(struct cli *c, int argc, char **argv)
{
	return cli_spec_verb(c, argc, argv, false, cli_edit_abort);
}
