/* Notifications: what changed, and the body that says it; see notify.h. */
#include "notify.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

static const char *const notify_names[NOTIFY_EVENTS] = {
	[NOTIFY_BREACH] = "breach",
	[NOTIFY_FREEZE] = "freeze",
	[NOTIFY_POOL_DONE] = "poolDone",
	[NOTIFY_FAILURE] = "failure",
	[NOTIFY_AWAITING_APPROVAL] = "awaitingApproval",
};

const char *notify_event_name(notify_event_t e)
{
	return e < NOTIFY_EVENTS ? notify_names[e] : "unknown";
}

int notify_event_parse(const char *name)
{
	for (int e = 0; e < NOTIFY_EVENTS; e++)
		if (strcmp(name, notify_names[e]) == 0)
			return e;
	return -1;
}

bool notify_wanted(uint32_t mask, notify_event_t e)
{
	return (mask & (1u << e)) != 0;
}

static bool notify_differ(const char *a, const char *b)
{
	return a == NULL || b == NULL ? a != b : strcmp(a, b) != 0;
}

/* A pool's phase became to (it had one recorded, and another). */
static bool notify_became(const notify_pool_t *p, const char *to)
{
	return p->phase_was != NULL && p->phase != NULL && strcmp(p->phase, to) == 0 && strcmp(p->phase_was, to) != 0;
}

size_t notify_decide(const notify_input_t *in, notify_t *out)
{
	size_t n = 0;
	if (in->breach.id != NULL && notify_differ(in->breach_id_was, in->breach.id))
		out[n++] = (notify_t){ NOTIFY_BREACH, -1 };
	if (in->frozen && !in->frozen_was)
		out[n++] = (notify_t){ NOTIFY_FREEZE, -1 };
	for (size_t i = 0; i < in->n_pools; i++) {
		const notify_pool_t *p = &in->pools[i];
		if (p->phase_was != NULL && p->failed > p->failed_was)
			out[n++] = (notify_t){ NOTIFY_FAILURE, (long)i };
		if (notify_became(p, "DRA"))
			out[n++] = (notify_t){ NOTIFY_POOL_DONE, (long)i };
		if (p->awaiting && !p->awaiting_was)
			out[n++] = (notify_t){ NOTIFY_AWAITING_APPROVAL, (long)i };
	}
	return n;
}

static const char *notify_or(const char *s, const char *otherwise)
{
	return s != NULL ? s : otherwise;
}

/* What the event says (message), what a person does next (action) and the chat line (text); all owned. */
static void notify_words(const notify_input_t *in, const notify_t *n, char **message, char **action, char **text)
{
	const notify_breach_t *b = &in->breach;
	const notify_pool_t *p = n->pool >= 0 ? &in->pools[n->pool] : NULL;
	const char *pool_message = p ? notify_or(p->message, "") : "";
	switch (n->event) {
	case NOTIFY_BREACH:
	case NOTIFY_FREEZE:
		*message = n->event == NOTIFY_BREACH
				   ? xasprintf("pool %s: %s measured %s, over its limit %s", notify_or(b->pool, "?"),
					       notify_or(b->signal, "?"), notify_or(b->value, "?"),
					       notify_or(b->threshold, "?"))
				   : xasprintf("frozen by breach %s: no node starts and new DRA allocations for the plan's "
					       "classes are stopped until a person lifts the freeze",
					       notify_or(b->id, "?"));
		*action = xasprintf("find the cause, then kubectl drashift acknowledge %s, or kubectl drashift rollback %s %s",
				    in->plan, in->plan, notify_or(b->pool, "POOL"));
		*text = xasprintf("drashift: plan %s %s: pool %s's %s measured %s over its limit %s. Action: %s", in->plan,
				  n->event == NOTIFY_BREACH ? "breached its SLO" : "is frozen", notify_or(b->pool, "?"),
				  notify_or(b->signal, "?"), notify_or(b->value, "?"), notify_or(b->threshold, "?"), *action);
		return;
	case NOTIFY_POOL_DONE:
		*message = xstrdup(pool_message);
		*action = xstrdup("");
		*text = xasprintf("drashift: plan %s: pool %s is on DRA (%s)", in->plan, p->name, pool_message);
		return;
	case NOTIFY_FAILURE:
		*message = xasprintf("%" PRId64 " node(s) failed their handover; the pool is %s: %s", p->failed,
				     notify_or(p->phase, "?"), pool_message);
		*action = xasprintf("read the failed nodes' drashift.io/failure annotation and Events, fix the cause, or "
				    "kubectl drashift rollback %s %s",
				    in->plan, p->name);
		*text = xasprintf("drashift: plan %s: pool %s: %s. Action: %s", in->plan, p->name, *message, *action);
		return;
	case NOTIFY_AWAITING_APPROVAL:
	default:
		*message = xstrdup("the canary baked and its SLO gate passed; promotion is Manual");
		*action = xasprintf("kubectl drashift promote %s %s", in->plan, p->name);
		*text = xasprintf("drashift: plan %s: pool %s waits for approval (canary baked, SLO gate passed). Action: %s",
				  in->plan, p->name, *action);
		return;
	}
}

cJSON *notify_payload(const notify_input_t *in, const notify_t *n, notify_format_t f)
{
	const notify_pool_t *p = n->pool >= 0 ? &in->pools[n->pool] : NULL;
	bool about_breach = n->event == NOTIFY_BREACH || n->event == NOTIFY_FREEZE;
	const char *subject = p ? p->name : notify_or(in->breach.id, "");
	char *id = xasprintf("%s/%s/%s/%" PRId64, in->plan, notify_event_name(n->event), subject, in->now_ms);
	char *message, *action, *text;
	notify_words(in, n, &message, &action, &text);

	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "kind", "MigrationPlanNotification");
	cJSON_AddStringToObject(o, "apiVersion", "drashift.io/v1alpha1");
	cJSON_AddStringToObject(o, "id", id);
	cJSON_AddStringToObject(o, "event", notify_event_name(n->event));
	cJSON_AddStringToObject(o, "time", in->time);
	cJSON_AddStringToObject(o, "plan", in->plan);
	const char *pool = p ? p->name : about_breach ? in->breach.pool : NULL;
	if (pool)
		cJSON_AddStringToObject(o, "pool", pool);
	if (p) {
		cJSON_AddStringToObject(o, "phase", notify_or(p->phase, ""));
		if (p->phase_was)
			cJSON_AddStringToObject(o, "previousPhase", p->phase_was);
	}
	cJSON_AddStringToObject(o, "message", message);
	if (about_breach && in->breach.id) {
		cJSON *b = cJSON_AddObjectToObject(o, "breach");
		cJSON_AddStringToObject(b, "id", in->breach.id);
		cJSON_AddStringToObject(b, "pool", notify_or(in->breach.pool, ""));
		cJSON_AddStringToObject(b, "signal", notify_or(in->breach.signal, ""));
		cJSON_AddStringToObject(b, "value", notify_or(in->breach.value, ""));
		cJSON_AddStringToObject(b, "threshold", notify_or(in->breach.threshold, ""));
	}
	cJSON_AddStringToObject(o, "action", action);
	if (f == NOTIFY_FORMAT_SLACK)
		cJSON_AddStringToObject(o, "text", text);
	free(id);
	free(message);
	free(action);
	free(text);
	return o;
}
