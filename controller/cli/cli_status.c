/*
 * kubectl drashift status PLAN [-w]: the plan as a tree, plan -> pools ->
 * nodes, on one 120-column screen.
 *
 * What it shows comes from the API only: the plan (spec and the status the
 * operator wrote: phases, signals, the breach) and the pools' nodes, whose
 * handover records drashift keeps in their annotations. The nodes are read
 * with the operator's own decoder (kinds/) and handover_read(), so a step
 * reads here exactly as the operator reads it.
 *
 * -w redraws on a terminal every two seconds: cursor home, each line then
 * "clear to end of line", and "clear to end of screen" after the last, so
 * nothing blinks. When stdout is not a terminal it prints one frame.
 */
#include <curl/curl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "cli.h"
#include "handover.h"
#include "json_decode.h"
#include "kinds.h"
#include "kube_api.h"
#include "plan.h"
#include "rfc3339.h"
#include "xalloc.h"

#define CLI_STATUS_WIDTH 120
#define CLI_STATUS_MAX_FRAME (16u << 20)
#define CLI_STATUS_WATCH_MS 2000
/* A pool with more nodes lists only those not at rest; the rest are counted. */
#define CLI_STATUS_LIST_ALL 12
#define CLI_STATUS_BAR 5

typedef struct {
	projection_node_t *nodes;
	handover_state_t *states;
	size_t n, cap;
} cli_pool_nodes_t;

typedef struct {
	buf_t text;
	size_t width;
	size_t lines;
} cli_frame_t;

/* Display columns of UTF-8 text (every character here is one column wide). */
static size_t cli_columns(const char *s, size_t len)
{
	size_t cols = 0;
	for (size_t i = 0; i < len; i++)
		cols += ((unsigned char)s[i] & 0xC0) != 0x80;
	return cols;
}

/* Append one line, cut to the frame's width (a cut ends in "…"). */
static void cli_line(cli_frame_t *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void cli_line(cli_frame_t *f, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *line;
	if (vasprintf(&line, fmt, ap) < 0)
		abort();
	va_end(ap);
	size_t len = strlen(line);
	while (len > 0 && line[len - 1] == ' ')
		len--;
	if (cli_columns(line, len) > f->width) {
		/* Keep width - 1 columns, then the ellipsis. */
		size_t cols = 0, i = 0;
		for (; i < len; i++) {
			if (((unsigned char)line[i] & 0xC0) != 0x80 && ++cols == f->width)
				break;
		}
		len = i;
		buf_append(&f->text, line, len);
		buf_puts(&f->text, "…");
	} else {
		buf_append(&f->text, line, len);
	}
	buf_puts(&f->text, "\n");
	f->lines++;
	free(line);
}

/* "4m12s", "12s", "3h05m", "2d4h". */
static void cli_duration(int64_t ms, char *buf, size_t len)
{
	int64_t s = ms / 1000;
	if (s < 0)
		s = 0;
	if (s < 60)
		snprintf(buf, len, "%llds", (long long)s);
	else if (s < 3600)
		snprintf(buf, len, "%lldm%02llds", (long long)(s / 60), (long long)(s % 60));
	else if (s < 86400)
		snprintf(buf, len, "%lldh%02lldm", (long long)(s / 3600), (long long)(s % 3600 / 60));
	else
		snprintf(buf, len, "%lldd%lldh", (long long)(s / 86400), (long long)(s % 86400 / 3600));
}

static int64_t cli_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static const char *cli_str(const cJSON *obj, const char *key, const char *dflt)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	return cJSON_IsString(v) ? v->valuestring : dflt;
}

static int64_t cli_time_ms(const cJSON *obj, const char *key)
{
	int64_t us;
	return rfc3339_parse(cli_str(obj, key, NULL), &us) == 0 ? us / 1000 : 0;
}

/*
 * Where a node stands between the device plugin (0) and DRA (CLI_STATUS_BAR):
 * legacy, draining, plugin-off, driver-on, verified, dra; a rollback walks
 * the same scale down (draining-dra 4 ... verified-legacy 1). -1: failed.
 */
static int cli_step_progress(handover_step_t step)
{
	switch (step) {
	case HANDOVER_LEGACY:
		return 0;
	case HANDOVER_DRAINING:
	case HANDOVER_VERIFIED_LEGACY:
		return 1;
	case HANDOVER_PLUGIN_OFF:
	case HANDOVER_PLUGIN_ON:
		return 2;
	case HANDOVER_DRIVER_ON:
	case HANDOVER_DRIVER_OFF:
		return 3;
	case HANDOVER_VERIFIED:
	case HANDOVER_DRAINING_DRA:
		return 4;
	case HANDOVER_DRA:
		return CLI_STATUS_BAR;
	default:
		return -1;
	}
}

/* "[###..]": how far the node is from the device plugin towards DRA. */
static void cli_bar(handover_step_t step, char *buf, size_t len)
{
	int done = cli_step_progress(step);
	if (done < 0) {
		snprintf(buf, len, "[ !!! ]");
		return;
	}
	char cells[CLI_STATUS_BAR + 1];
	for (int i = 0; i < CLI_STATUS_BAR; i++)
		cells[i] = i < done ? '#' : '.';
	cells[CLI_STATUS_BAR] = '\0';
	snprintf(buf, len, "[%s]", cells);
}

static void cli_pool_nodes_free(cli_pool_nodes_t *p)
{
	for (size_t i = 0; i < p->n; i++)
		kinds_nodes.release(&p->nodes[i]);
	free(p->nodes);
	free(p->states);
	memset(p, 0, sizeof(*p));
}

/* The selector as the API's labelSelector parameter ("k in (a,b),!k2"), escaped. */
static char *cli_label_selector(const plan_selector_t *sel)
{
	buf_t b;
	buf_init(&b, 1u << 20);
	for (size_t r = 0; r < sel->n_reqs; r++) {
		const plan_requirement_t *q = &sel->reqs[r];
		if (r > 0)
			buf_puts(&b, ",");
		if (q->op == PLAN_SELECTOR_DOES_NOT_EXIST)
			buf_puts(&b, "!");
		buf_puts(&b, q->key);
		if (q->op == PLAN_SELECTOR_IN || q->op == PLAN_SELECTOR_NOT_IN) {
			buf_puts(&b, q->op == PLAN_SELECTOR_IN ? " in (" : " notin (");
			for (size_t v = 0; v < q->n_values; v++) {
				buf_puts(&b, v ? "," : "");
				buf_puts(&b, q->values[v]);
			}
			buf_puts(&b, ")");
		}
	}
	char *e = curl_easy_escape(NULL, b.data ? b.data : "", 0);
	char *out = xstrdup(e);
	curl_free(e);
	buf_free(&b);
	return out;
}

/*
 * The pool's nodes, read page by page (no cap: a pool is as large as the
 * cluster lets it be), decoded and matched again with the operator's matcher.
 */
static int cli_pool_nodes(struct cli *c, const plan_t *plan, const plan_pool_t *pool, cli_pool_nodes_t *out)
{
	memset(out, 0, sizeof(*out));
	char *selector = cli_label_selector(&pool->node_selector);
	char *cont = NULL;
	int rc = 0;
	do {
		char *path = xasprintf("/api/v1/nodes?limit=500&labelSelector=%s%s%s", selector, cont ? "&continue=" : "",
				       cont ? cont : "");
		cJSON *list = cli_get_json(c, path, NULL);
		free(path);
		free(cont);
		cont = NULL;
		if (list == NULL) {
			rc = -1;
			break;
		}
		const cJSON *item;
		cJSON_ArrayForEach(item, cJSON_GetObjectItemCaseSensitive(list, "items"))
		{
			if (out->n == out->cap) {
				out->cap = out->cap ? out->cap * 2 : 16;
				out->nodes = xrealloc(out->nodes, out->cap * sizeof(*out->nodes));
				out->states = xrealloc(out->states, out->cap * sizeof(*out->states));
			}
			char err[256];
			if (kinds_nodes.decode(item, &out->nodes[out->n], err, sizeof(err)) != 0)
				continue; /* the operator skips it too; its name may be all that is wrong */
			if (!plan_selector_matches(&pool->node_selector, &out->nodes[out->n])) {
				kinds_nodes.release(&out->nodes[out->n]);
				continue;
			}
			handover_read(plan, &out->nodes[out->n], &out->states[out->n]);
			out->n++;
		}
		const cJSON *md = cJSON_GetObjectItemCaseSensitive(list, "metadata");
		const char *next = cli_str(md, "continue", NULL);
		if (next && next[0]) {
			char *e = curl_easy_escape(NULL, next, 0);
			cont = xstrdup(e);
			curl_free(e);
		}
		cJSON_Delete(list);
	} while (cont != NULL);
	free(selector);
	return rc;
}

static const cJSON *cli_pool_status(const cJSON *status, const char *pool)
{
	const cJSON *p;
	cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(status, "pools"))
	{
		if (strcmp(cli_str(p, "name", ""), pool) == 0)
			return p;
	}
	return NULL;
}

/* One node's line: name, step, progress bar, how long at this step, and what it waits for. */
/* The name column of a pool's node lines: as wide as the longest name listed. */
static int cli_name_width(const cli_pool_nodes_t *pn)
{
	size_t w = 8;
	for (size_t i = 0; i < pn->n; i++)
		if (strlen(pn->nodes[i].meta.name) > w)
			w = strlen(pn->nodes[i].meta.name);
	return w > 63 ? 63 : (int)w;
}

/* One node's line: name, step, progress bar, how long at this step, and what it waits for. */
static void cli_node_line(cli_frame_t *f, const char *branch, int name_width, const projection_node_t *node,
			  const handover_state_t *st, bool canary, int64_t now)
{
	char bar[16], since[32] = "";
	cli_bar(st->step, bar, sizeof(bar));
	if (st->since_ms > 0 && !st->bad_record)
		cli_duration(now - st->since_ms, since, sizeof(since));
	bool moving = !st->bad_record && handover_step_in_flight(st->step);
	/* "→" is one column and three bytes: the step column is padded by hand. */
	char step[48];
	int len = snprintf(step, sizeof(step), "%s%s", st->bad_record ? "unreadable" : handover_step_name(st->step),
			   !moving ? "" : st->direction == HANDOVER_TO_DRA ? "→DRA" : "→legacy");
	int cols = len - (moving ? 2 : 0);
	const char *waits = "";
	if (st->bad_record)
		waits = "its drashift.io annotations cannot be read: drashift leaves it alone";
	else if (st->quarantine)
		waits = "QUARANTINED: drashift leaves it alone, cordoned";
	else if (st->step == HANDOVER_FAILED)
		waits = st->failure ? st->failure : handover_step_waits_for(st->step);
	else if (moving)
		waits = handover_step_waits_for(st->step);
	cli_line(f, "%s %-*s %-6s %s%*s %s %6s  %s%s", branch, name_width, node->meta.name, canary ? "canary" : "", step,
		 cols < 22 ? 22 - cols : 0, "", bar, since, moving && !st->quarantine ? "waiting for " : "", waits);
}

static int cli_node_rank(const handover_state_t *st)
{
	return st->step == HANDOVER_FAILED || st->bad_record ? 0 : handover_step_in_flight(st->step) ? 1 : 2;
}

/* The nodes of a pool: every one when few, else those not at rest and a count of the rest. */
static void cli_render_nodes(cli_frame_t *f, const char *stem, const cli_pool_nodes_t *pn, const cJSON *pool_status,
			     int64_t now)
{
	const cJSON *canary = cJSON_GetObjectItemCaseSensitive(pool_status, "canaryNodes");
	bool all = pn->n <= CLI_STATUS_LIST_ALL;
	int name_width = cli_name_width(pn);
	size_t shown = 0, on_dra = 0, on_legacy = 0;
	size_t total_shown = 0;
	for (size_t i = 0; i < pn->n; i++)
		if (all || cli_node_rank(&pn->states[i]) < 2 || cli_has_string(canary, pn->nodes[i].meta.name))
			total_shown++;
	for (int rank = 0; rank < 3; rank++)
		for (size_t i = 0; i < pn->n; i++) {
			const handover_state_t *st = &pn->states[i];
			bool is_canary = cli_has_string(canary, pn->nodes[i].meta.name);
			if (cli_node_rank(st) != rank)
				continue;
			if (!all && rank == 2 && !is_canary) {
				on_dra += st->step == HANDOVER_DRA;
				on_legacy += st->step == HANDOVER_LEGACY;
				continue;
			}
			shown++;
			bool last = shown == total_shown && all;
			char branch[64];
			snprintf(branch, sizeof(branch), "%s%s", stem, last ? "└─" : "├─");
			cli_node_line(f, branch, name_width, &pn->nodes[i], st, is_canary, now);
		}
	if (!all)
		cli_line(f, "%s└─ and %zu more at rest: %zu on DRA, %zu on the device plugin", stem, on_dra + on_legacy,
			 on_dra, on_legacy);
	if (pn->n == 0)
		cli_line(f, "%s└─ (no node matches the pool's selector)", stem);
}

/* The pool's gate: one line per signal, value against threshold, with the verdict. */
static void cli_render_gate(cli_frame_t *f, const char *stem, const cJSON *status, const char *pool)
{
	const cJSON *s;
	const char *gate = cli_str(cli_pool_status(status, pool), "gate", "not judged yet");
	cli_line(f, "%s├─ gate: %s", stem, gate);
	cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(status, "signals"))
	{
		if (strcmp(cli_str(s, "pool", ""), pool) != 0)
			continue;
		const cJSON *samples = cJSON_GetObjectItemCaseSensitive(s, "samples");
		const char *verdict = cli_str(s, "verdict", "?");
		char sample_text[48] = "";
		bool judged = strcmp(verdict, "NotJudged") != 0;
		int64_t n_samples;
		if (json_number_int(samples, &n_samples) && judged)
			snprintf(sample_text, sizeof(sample_text), "%lld samples", (long long)n_samples);
		cli_line(f, "%s│    %-28s %10s  limit %-10s %-14s %s", stem, cli_str(s, "name", "?"),
			 judged ? cli_str(s, "value", "-") : "-", judged ? cli_str(s, "threshold", "-") : "none", sample_text,
			 verdict);
	}
}

/* The bake of a pool's canary: how far, and how long it still has. */
static void cli_bake_text(const plan_pool_t *pool, const cJSON *ps, int64_t now, char *buf, size_t len)
{
	int64_t bake_start = cli_time_ms(ps, "bakeStartTime");
	buf[0] = '\0';
	if (bake_start == 0)
		return;
	char done[32], total[32];
	cli_duration(now - bake_start, done, sizeof(done));
	cli_duration((int64_t)pool->bake_ms, total, sizeof(total));
	if (pool->promote)
		snprintf(buf, len, "  bake %s of %s (promoted)", done, total);
	else
		snprintf(buf, len, "  bake %s of %s", now - bake_start >= (int64_t)pool->bake_ms ? total : done, total);
}

/* The freeze: none, or the breach, since when, and how a person lifts it. */
static void cli_render_freeze(cli_frame_t *f, const char *name, const cJSON *status, int64_t now)
{
	const cJSON *breach = cJSON_GetObjectItemCaseSensitive(status, "breach");
	const cJSON *frozen = cJSON_GetObjectItemCaseSensitive(status, "frozen");
	if (!cJSON_IsObject(breach)) {
		cli_line(f, "├─ freeze: none");
		return;
	}
	char since[32];
	cli_duration(now - cli_time_ms(breach, "time"), since, sizeof(since));
	if (cJSON_IsTrue(frozen)) {
		cli_line(f, "├─ freeze: FROZEN %s ago: pool %s %s measured %s, limit %s", since, cli_str(breach, "pool", "?"),
			 cli_str(breach, "signal", "?"), cli_str(breach, "value", "?"), cli_str(breach, "threshold", "?"));
		cli_line(f, "│  lift: kubectl drashift acknowledge %s (breach %s)", name, cli_str(breach, "id", "?"));
	} else
		cli_line(f, "├─ freeze: lifted (breach %s acknowledged)", cli_str(breach, "id", "?"));
}

/* The next thing drashift waits for: the freeze, else the first pool that is not done (on DRA, or rolled back). */
static void cli_render_waiting_for(cli_frame_t *f, const char *name, const plan_t *plan, const cJSON *status,
				   int64_t now)
{
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(status, "frozen"))) {
		cli_line(f, "waiting for: a person to acknowledge the breach (kubectl drashift acknowledge %s)", name);
		return;
	}
	for (size_t i = 0; i < plan->n_pools; i++) {
		const cJSON *ps = cli_pool_status(status, plan->pools[i].name);
		const char *phase = cli_str(ps, "phase", "");
		bool held_back = plan->rollback_all || plan->pools[i].rollback;
		if (strcmp(phase, "DRA") == 0 || (strcmp(phase, "Legacy") == 0 && held_back))
			continue;
		/* A bake counts down here, between the operator's status writes. */
		int64_t bake_end = cli_time_ms(ps, "bakeStartTime") + (int64_t)plan->pools[i].bake_ms;
		char left[32];
		cli_duration(bake_end - now, left, sizeof(left));
		if (strcmp(phase, "Canary") == 0 && cli_time_ms(ps, "bakeStartTime") > 0 && !plan->pools[i].promote &&
		    bake_end > now)
			cli_line(f, "waiting for: pool %s: the canary's bake to end, %s left; then the SLO gate to pass",
				 plan->pools[i].name, left);
		else
			cli_line(f, "waiting for: pool %s: %s", plan->pools[i].name, cli_str(ps, "message", "not judged yet"));
		return;
	}
	cli_line(f, "waiting for: nothing: every pool is on DRA, or back on the device plugin as spec.rollback asks");
}

/* What drashift waits for, and the action to take: status.activity ends in it. */
static void cli_render_waiting(cli_frame_t *f, const char *name, const plan_t *plan, const cJSON *status,
			       int64_t now)
{
	if (!cJSON_IsObject(status)) {
		cli_line(f, "waiting for: drashift to write the plan's first status (is drashift-controller running?)");
		return;
	}
	cli_render_waiting_for(f, name, plan, status, now);
	const char *activity = cli_str(status, "activity", NULL);
	const char *action = activity ? strstr(activity, "Action: ") : NULL;
	if (action)
		cli_line(f, "action: %s", action + strlen("Action: "));
}

/* The maintenance windows, when the plan has any: open until when, or when the next opens. */
static void cli_render_window(cli_frame_t *f, const cJSON *status)
{
	const cJSON *w = cJSON_GetObjectItemCaseSensitive(status, "window");
	if (!cJSON_IsObject(w))
		return;
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(w, "open")))
		cli_line(f, "├─ window: open until %s", cli_str(w, "closeTime", "(no end)"));
	else
		cli_line(f, "├─ window: closed, no handover starts; next opens %s", cli_str(w, "nextOpenTime", "(never)"));
}

static void cli_render(cli_frame_t *f, const char *name, const cJSON *obj, const plan_t *plan,
		       const cli_pool_nodes_t *nodes, int64_t now)
{
	const cJSON *status = cJSON_GetObjectItemCaseSensitive(obj, "status");
	cli_line(f, "migrationplan %s   phase %s   pools on DRA %s   nodes on DRA %s%s", name,
		 cli_str(status, "phase", "(none yet)"), cli_str(status, "poolsOnDRA", "-"),
		 cli_str(status, "nodesOnDRA", "-"), plan->paused ? "   PAUSED" : "");
	cli_render_waiting(f, name, plan, status, now);
	cli_render_freeze(f, name, status, now);
	cli_render_window(f, status);
	for (size_t i = 0; i < plan->n_pools; i++) {
		const plan_pool_t *pool = &plan->pools[i];
		const cJSON *ps = cli_pool_status(status, pool->name);
		bool last = i + 1 == plan->n_pools;
		char bake[96];
		cli_bake_text(pool, ps, now, bake, sizeof(bake));
		size_t dra = 0;
		for (size_t n = 0; n < nodes[i].n; n++)
			dra += nodes[i].states[n].step == HANDOVER_DRA;
		cli_line(f, "%s pool %s   %s   %zu/%zu nodes on DRA%s%s", last ? "└─" : "├─", pool->name,
			 cli_str(ps, "phase", "-"), dra, nodes[i].n, bake,
			 pool->rollback || plan->rollback_all ? "   rollback requested" : "");
		const char *stem = last ? "   " : "│  ";
		const char *message = cli_str(ps, "message", NULL);
		if (message)
			cli_line(f, "%s├─ %s", stem, message);
		cli_render_gate(f, stem, status, pool->name);
		cli_render_nodes(f, stem, &nodes[i], ps, now);
	}
}

/* Read everything and draw one frame into f. Returns 0, or 1 after an error line. */
static int cli_status_frame(struct cli *c, const char *name, cli_frame_t *f)
{
	cJSON *obj = cli_get_plan(c, name);
	if (obj == NULL)
		return 1;
	plan_t plan;
	char err[512];
	if (plan_decode(obj, &plan, err, sizeof(err)) != 0) {
		cli_line(f, "migrationplan %s   phase %s", name,
			 cli_str(cJSON_GetObjectItemCaseSensitive(obj, "status"), "phase", "(none yet)"));
		cli_line(f, "the plan is invalid, drashift does nothing for it: %s", err);
		cJSON_Delete(obj);
		return 0;
	}
	cli_pool_nodes_t *nodes = xcalloc(plan.n_pools + 1, sizeof(*nodes));
	int rc = 0;
	for (size_t i = 0; i < plan.n_pools && rc == 0; i++)
		if (cli_pool_nodes(c, &plan, &plan.pools[i], &nodes[i]) != 0)
			rc = 1;
	if (rc == 0)
		cli_render(f, name, obj, &plan, nodes, cli_now_ms());
	for (size_t i = 0; i < plan.n_pools; i++)
		cli_pool_nodes_free(&nodes[i]);
	free(nodes);
	plan_free(&plan);
	cJSON_Delete(obj);
	return rc;
}

/*
 * The width a frame may use: 120 columns, and on a terminal of 120 or fewer
 * one less than it has: a wrapped line would break the redraw, and a line
 * that fills the last column leaves the cursor there, where "clear to end of
 * line" would erase that column.
 */
static size_t cli_status_width(const struct cli *c)
{
	struct winsize ws;
	if (c->tty && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 20 && ws.ws_col <= CLI_STATUS_WIDTH)
		return ws.ws_col - 1;
	return CLI_STATUS_WIDTH;
}

/* Draw in place: home, every line cleared to its end, then the rest of the screen cleared. */
static void cli_status_redraw(struct cli *c, const cli_frame_t *f)
{
	fputs("\033[H", c->out);
	const char *s = f->text.data ? f->text.data : "";
	for (const char *nl; (nl = strchr(s, '\n')) != NULL; s = nl + 1) {
		fwrite(s, 1, (size_t)(nl - s), c->out);
		fputs("\033[K\n", c->out);
	}
	fputs("\033[J", c->out);
	fflush(c->out);
}

int cli_verb_status(struct cli *c, int argc, char **argv)
{
	bool watch = false;
	const char *name = NULL;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-w") == 0 || strcmp(argv[i], "--watch") == 0)
			watch = true;
		else if (argv[i][0] == '-')
			return cli_usage_error(c, "unknown flag '%s'", argv[i]);
		else if (name == NULL)
			name = argv[i];
		else
			return cli_usage_error(c, "too many arguments");
	}
	if (name == NULL)
		return cli_usage_error(c, "missing argument");
	bool redraw = watch && c->tty;
	if (redraw)
		fputs("\033[2J", c->out);
	for (;;) {
		cli_frame_t f = { .width = cli_status_width(c) };
		buf_init(&f.text, CLI_STATUS_MAX_FRAME);
		int rc = cli_status_frame(c, name, &f);
		if (redraw) {
			if (rc == 0)
				cli_status_redraw(c, &f);
		} else if (rc == 0) {
			fputs(f.text.data ? f.text.data : "", c->out);
		}
		buf_free(&f.text);
		if (!redraw)
			return rc;
		/* While watching, an error line is printed and the next poll tries again. */
		struct timespec ts = { .tv_sec = CLI_STATUS_WATCH_MS / 1000, .tv_nsec = 0 };
		nanosleep(&ts, NULL);
	}
}
