#include "leader.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "rfc3339.h"
#include "xalloc.h"

#define LEADER_DEFAULT_LEASE_DURATION_MS 15000u
#define LEADER_DEFAULT_RENEW_DEADLINE_MS 10000u
#define LEADER_DEFAULT_RETRY_PERIOD_MS 2000u

/* ---- records ------------------------------------------------------------- */

void leader_record_free(leader_record_t *rec)
{
	free(rec->holder);
	free(rec->resource_version);
	memset(rec, 0, sizeof(*rec));
}

/* An optional integer field: absent or null -> 0; else a whole number in [0, max]. */
static int leader_int_field(const cJSON *obj, const char *key, int64_t max, int64_t *out, char *err,
			    size_t errlen)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	*out = 0;
	if (v == NULL || cJSON_IsNull(v))
		return 0;
	if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble > (double)max ||
	    v->valuedouble != (double)(int64_t)v->valuedouble) {
		snprintf(err, errlen, "spec.%s is not a whole number in 0..%lld", key, (long long)max);
		return -1;
	}
	*out = (int64_t)v->valuedouble;
	return 0;
}

static int leader_time_field(const cJSON *obj, const char *key, int64_t *out, char *err, size_t errlen)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	*out = 0;
	if (v == NULL || cJSON_IsNull(v))
		return 0;
	if (!cJSON_IsString(v) || rfc3339_parse(v->valuestring, out) != 0) {
		snprintf(err, errlen, "spec.%s is not a MicroTime", key);
		return -1;
	}
	return 0;
}

static int leader_record_from_json(const cJSON *obj, leader_record_t *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	if (!cJSON_IsObject(obj)) {
		snprintf(err, errlen, "a Lease is not a JSON object");
		return -1;
	}
	const cJSON *md = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
	const cJSON *rv = cJSON_GetObjectItemCaseSensitive(md, "resourceVersion");
	if (!cJSON_IsObject(md) || !cJSON_IsString(rv) || rv->valuestring[0] == '\0') {
		snprintf(err, errlen, "Lease without metadata.resourceVersion");
		return -1;
	}
	const cJSON *spec = cJSON_GetObjectItemCaseSensitive(obj, "spec");
	if (spec != NULL && !cJSON_IsNull(spec) && !cJSON_IsObject(spec)) {
		snprintf(err, errlen, "Lease spec is not an object");
		return -1;
	}
	const cJSON *holder = cJSON_GetObjectItemCaseSensitive(spec, "holderIdentity");
	if (holder != NULL && !cJSON_IsNull(holder) && !cJSON_IsString(holder)) {
		snprintf(err, errlen, "spec.holderIdentity is not a string");
		return -1;
	}
	leader_record_t r = { .present = true };
	if (leader_int_field(spec, "leaseDurationSeconds", INT32_MAX, &r.lease_duration_s, err, errlen) ||
	    leader_int_field(spec, "leaseTransitions", INT32_MAX, &r.transitions, err, errlen) ||
	    leader_time_field(spec, "acquireTime", &r.acquire_time_us, err, errlen) ||
	    leader_time_field(spec, "renewTime", &r.renew_time_us, err, errlen))
		return -1;
	r.holder = xstrdup(cJSON_IsString(holder) ? holder->valuestring : "");
	r.resource_version = xstrdup(rv->valuestring);
	*out = r;
	return 0;
}

int leader_record_decode(const char *json, size_t len, leader_record_t *out, char *err, size_t errlen)
{
	cJSON *obj = cJSON_ParseWithLength(json, len);
	if (obj == NULL) {
		memset(out, 0, sizeof(*out));
		snprintf(err, errlen, "a Lease is not valid JSON");
		return -1;
	}
	int rc = leader_record_from_json(obj, out, err, errlen);
	cJSON_Delete(obj);
	return rc;
}

uint64_t leader_observed_time(const leader_record_t *prev, uint64_t prev_observed_ms,
			      const leader_record_t *cur, uint64_t now_ms)
{
	if (prev == NULL || prev->present != cur->present)
		return now_ms;
	if (!cur->present)
		return prev_observed_ms;
	const char *a = prev->resource_version ? prev->resource_version : "";
	const char *b = cur->resource_version ? cur->resource_version : "";
	return strcmp(a, b) == 0 ? prev_observed_ms : now_ms;
}

/* ---- the decision -------------------------------------------------------- */

/* How long a record holds after it was seen to change: the holder's duration, else ours. */
static uint64_t leader_record_duration_ms(const leader_record_t *rec, uint64_t fallback_ms)
{
	return rec->lease_duration_s > 0 ? (uint64_t)rec->lease_duration_s * 1000u : fallback_ms;
}

const char *leader_action_name(leader_action_t a)
{
	static const char *const names[] = { "create", "acquire", "renew", "wait", "lose" };
	return names[a];
}

/*
 * client-go's tryAcquireOrRenew, as a function of what was observed. Two
 * deliberate differences, both on the safe side: a leader that sees the Lease
 * held by anyone else or deleted stops at once (client-go would keep leading
 * until its renew deadline), and a record without a positive
 * leaseDurationSeconds expires after our own duration instead of at once.
 */
leader_action_t leader_decide(const leader_situation_t *s)
{
	const leader_record_t *rec = s->record;
	bool present = rec != NULL && rec->present;
	const char *holder = present && rec->holder ? rec->holder : "";
	bool ours = strcmp(holder, s->identity) == 0;

	if (s->leading) {
		if (s->now_ms >= s->last_renew_ms + s->renew_deadline_ms)
			return LEADER_LOSE;
		if (!present || !ours)
			return LEADER_LOSE;
		return LEADER_RENEW;
	}
	if (!present)
		return LEADER_CREATE;
	if (holder[0] == '\0' || ours)
		return LEADER_ACQUIRE;
	if (s->observed_ms + leader_record_duration_ms(rec, s->lease_duration_ms) > s->now_ms)
		return LEADER_WAIT;
	return LEADER_ACQUIRE;
}

/* ---- the elector --------------------------------------------------------- */

typedef enum {
	LEADER_OP_NONE,
	LEADER_OP_READ,
	LEADER_OP_CREATE,
	LEADER_OP_UPDATE,
	LEADER_OP_RELEASE,
} leader_op_t;

struct leader {
	uv_loop_t *loop;
	kube_http_t *http;
	leader_options_t opt; /* strings owned */
	char *path;           /* .../leases/NAME */
	char *collection;     /* .../leases */
	char *lease_key;      /* NS/NAME, for logs */

	leader_state_t state;
	cJSON *object;          /* the Lease as last read or written; NULL when absent or unknown */
	leader_record_t record; /* decoded view of what was last read or written */
	bool observed;          /* record holds a successful read or write */
	uint64_t observed_ms;   /* when record was last seen to change */
	uint64_t last_renew_ms; /* when our last successful write was sent */
	uint64_t sent_ms;       /* when the write in flight was sent */
	unsigned failures;      /* requests failed in a row; only the first is logged as a warning */

	kube_http_call_t *call; /* at most one request at a time */
	leader_op_t op;
	bool abandoned; /* call was cancelled: its answer is ignored */

	uv_timer_t retry_timer;    /* next read or renewal (and the release step) */
	uv_timer_t deadline_timer; /* while leading: last_renew + renew_deadline */
	int open_handles;

	bool release_pending; /* leader_release() returned 0, done not called yet */
	bool release_was_leading;
	bool release_waiting; /* the release step waits for a cancelled call's answer */
	int release_conflicts; /* 409s the release met; after one, it re-reads and tries once more */
	void (*release_done)(void *data);
	void *release_data;

	bool stopping;
	void (*on_stopped)(void *data);
	void *stopped_data;
};

static void leader_read(leader_t *l);
static void leader_release_send(leader_t *l);
static void leader_release_finish(leader_t *l, const char *why);
static void leader_release_failed(leader_t *l, const char *error);

static const char *leader_op_name(leader_op_t op)
{
	static const char *const names[] = { "none", "read", "create", "update", "release" };
	return names[op];
}

const char *leader_state_name(leader_state_t s)
{
	static const char *const names[] = { "Starting", "Standby", "Leading", "Releasing", "Stopped" };
	return names[s];
}

/* Every state change comes through here: a leadership change is one log line. */
static void leader_set_state(leader_t *l, leader_state_t to, const char *why)
{
	if (l->state == to)
		return;
	log_info("leader election", "from", leader_state_name(l->state), "to", leader_state_name(to), "why", why,
		 "lease", l->lease_key, "identity", l->opt.identity, "holder",
		 l->observed ? l->record.holder ? l->record.holder : "" : "?");
	l->state = to;
}

static bool leader_active(const leader_t *l)
{
	return !l->stopping &&
	       (l->state == LEADER_STARTING || l->state == LEADER_STANDBY || l->state == LEADER_LEADING);
}

static uint64_t leader_now(const leader_t *l)
{
	return uv_now(l->loop);
}

static void leader_on_tick(uv_timer_t *t);

static void leader_schedule(leader_t *l, uint64_t delay_ms)
{
	if (leader_active(l))
		uv_timer_start(&l->retry_timer, leader_on_tick, delay_ms, 0);
}

/*
 * A leader renews every retry period exactly; candidates try a little early
 * (up to a tenth of the period) so they do not march in step, and so that a
 * standby never sees a change later than one retry period after it happened.
 */
static uint64_t leader_retry_delay(const leader_t *l)
{
	uint64_t period = l->opt.retry_period_ms;
	if (l->state == LEADER_LEADING)
		return period;
	return period - (uint64_t)random() % (period / 10 + 1);
}

static void leader_abandon_call(leader_t *l)
{
	if (l->call != NULL && !l->abandoned) {
		l->abandoned = true;
		kube_http_cancel(l->call);
	}
}

/* Stop leading now: first leader_is_leader() turns false, then the owner is told. */
static void leader_lose(leader_t *l, const char *why)
{
	if (l->state != LEADER_LEADING)
		return;
	leader_set_state(l, LEADER_STANDBY, why);
	uv_timer_stop(&l->deadline_timer);
	leader_abandon_call(l); /* a renewal still in flight no longer counts */
	leader_schedule(l, leader_retry_delay(l));
	if (l->opt.on_stopped_leading)
		l->opt.on_stopped_leading(l->opt.data);
}

/* Returns true when the renew deadline has passed (and leadership is lost). */
static bool leader_check_deadline(leader_t *l)
{
	if (l->state != LEADER_LEADING || leader_now(l) < l->last_renew_ms + l->opt.renew_deadline_ms)
		return false;
	log_warn("lease not renewed within the renew deadline", "lease", l->lease_key, "identity", l->opt.identity);
	leader_lose(l, "renew deadline passed");
	return true;
}

static void leader_on_deadline(uv_timer_t *t)
{
	leader_check_deadline(t->data);
}

/*
 * A request failed or could not start: a first answer that fails still ends
 * Starting, a leader past its deadline stops, everyone tries again later. Only
 * the first failure in a row is a warning: an outage is one line, not one a try.
 */
static void leader_failed(leader_t *l, const char *what, const char *error)
{
	if (l->failures++ == 0)
		log_warn("lease request failed", "request", what, "lease", l->lease_key, "error", error);
	else
		log_debug("lease request failed", "request", what, "lease", l->lease_key, "error", error);
	if (l->state == LEADER_STARTING)
		leader_set_state(l, LEADER_STANDBY, "cannot reach the lease");
	if (!leader_check_deadline(l))
		leader_schedule(l, leader_retry_delay(l));
}

static void leader_note_success(leader_t *l)
{
	if (l->failures > 0) {
		char n[24];
		snprintf(n, sizeof(n), "%u", l->failures);
		log_info("lease requests work again", "lease", l->lease_key, "failed", n);
	}
	l->failures = 0;
}

/* Take what was read or written as the latest observation of the Lease. */
static void leader_observe(leader_t *l, cJSON *object, leader_record_t *rec)
{
	uint64_t now = leader_now(l);
	l->observed_ms = leader_observed_time(l->observed ? &l->record : NULL, l->observed_ms, rec, now);
	leader_record_free(&l->record);
	l->record = *rec;
	memset(rec, 0, sizeof(*rec));
	l->observed = true;
	cJSON_Delete(l->object);
	l->object = object;
}

/* ---- writes -------------------------------------------------------------- */

static int64_t leader_wall_us(void)
{
	uv_timeval64_t tv;
	if (uv_gettimeofday(&tv) != 0)
		return 0;
	return tv.tv_sec * 1000000 + tv.tv_usec;
}

static void leader_spec_set(cJSON *spec, const char *key, cJSON *value)
{
	if (value == NULL)
		abort(); /* cJSON could not allocate */
	cJSON_DeleteItemFromObjectCaseSensitive(spec, key);
	cJSON_AddItemToObject(spec, key, value);
}

static cJSON *leader_object_new(const leader_t *l)
{
	cJSON *obj = cJSON_CreateObject();
	cJSON_AddStringToObject(obj, "apiVersion", "coordination.k8s.io/v1");
	cJSON_AddStringToObject(obj, "kind", "Lease");
	cJSON *md = cJSON_AddObjectToObject(obj, "metadata");
	cJSON_AddStringToObject(md, "name", l->opt.name);
	cJSON_AddStringToObject(md, "namespace", l->opt.namespace);
	return obj;
}

static void leader_on_response(const kube_http_response_t *resp, void *data);

/*
 * Write the Lease. The object last read is modified, not rebuilt, so its
 * labels, annotations and spec fields we do not know survive, and it carries
 * the resourceVersion read: the server refuses the write (409) if anyone wrote
 * since.
 */
static void leader_write(leader_t *l, leader_op_t op)
{
	if (op != LEADER_OP_CREATE && l->object == NULL) {
		/* Never write without the resourceVersion read: that would overwrite blindly. */
		leader_read(l);
		return;
	}
	char now_str[RFC3339_LEN];
	if (rfc3339_format(leader_wall_us(), 6, now_str, sizeof(now_str)) != 0)
		snprintf(now_str, sizeof(now_str), "1970-01-01T00:00:00.000000Z");
	cJSON *obj = op == LEADER_OP_CREATE ? leader_object_new(l) : cJSON_Duplicate(l->object, 1);
	if (obj == NULL)
		abort();
	cJSON *spec = cJSON_GetObjectItemCaseSensitive(obj, "spec");
	if (!cJSON_IsObject(spec)) {
		cJSON_DeleteItemFromObjectCaseSensitive(obj, "spec");
		spec = cJSON_AddObjectToObject(obj, "spec");
	}
	const char *old_holder = l->observed && l->record.present && l->record.holder ? l->record.holder : "";
	bool same_holder = strcmp(old_holder, l->opt.identity) == 0;
	int64_t transitions = l->observed && l->record.present ? l->record.transitions : 0;
	uint64_t duration_s = (l->opt.lease_duration_ms + 999) / 1000;

	if (op == LEADER_OP_RELEASE) {
		/* client-go's release: nobody holds it, and it expires in a second. */
		leader_spec_set(spec, "holderIdentity", cJSON_CreateString(""));
		leader_spec_set(spec, "leaseDurationSeconds", cJSON_CreateNumber(1));
		leader_spec_set(spec, "acquireTime", cJSON_CreateString(now_str));
		leader_spec_set(spec, "renewTime", cJSON_CreateString(now_str));
		leader_spec_set(spec, "leaseTransitions", cJSON_CreateNumber((double)transitions));
	} else {
		leader_spec_set(spec, "holderIdentity", cJSON_CreateString(l->opt.identity));
		leader_spec_set(spec, "leaseDurationSeconds", cJSON_CreateNumber((double)duration_s));
		/*
		 * acquireTime and leaseTransitions change with the holder only: a
		 * renewal, or taking back a lease that still names us, keeps them.
		 */
		bool has_acquire = cJSON_IsString(cJSON_GetObjectItemCaseSensitive(spec, "acquireTime"));
		if (op == LEADER_OP_CREATE)
			transitions = 0;
		else if (!same_holder)
			transitions++;
		if (op == LEADER_OP_CREATE || !same_holder || !has_acquire)
			leader_spec_set(spec, "acquireTime", cJSON_CreateString(now_str));
		leader_spec_set(spec, "renewTime", cJSON_CreateString(now_str));
		leader_spec_set(spec, "leaseTransitions", cJSON_CreateNumber((double)transitions));
	}
	char *body = cJSON_PrintUnformatted(obj);
	cJSON_Delete(obj);
	if (body == NULL)
		abort();

	kube_http_req_t req = {
		.method = op == LEADER_OP_CREATE ? "POST" : "PUT",
		.path = op == LEADER_OP_CREATE ? l->collection : l->path,
		.content_type = "application/json",
		.body = body,
		.body_len = strlen(body),
		/* A write that takes longer than the renew deadline is worthless. */
		.timeout_ms = (long)l->opt.renew_deadline_ms,
		.max_body = 1u << 20,
	};
	l->sent_ms = leader_now(l);
	l->op = op;
	l->abandoned = false;
	int rc = kube_http_request(l->http, &req, leader_on_response, l, &l->call);
	free(body);
	if (rc != 0) {
		l->call = NULL;
		l->op = LEADER_OP_NONE;
		if (op == LEADER_OP_RELEASE) {
			leader_release_failed(l, "cannot start the request");
			return;
		}
		leader_failed(l, leader_op_name(op), "cannot start the request");
	}
}

/* ---- decisions on what was read ------------------------------------------ */

static void leader_act(leader_t *l)
{
	uint64_t now = leader_now(l);
	leader_situation_t s = {
		.record = &l->record,
		.observed_ms = l->observed_ms,
		.identity = l->opt.identity,
		.leading = l->state == LEADER_LEADING,
		.last_renew_ms = l->last_renew_ms,
		.now_ms = now,
		.lease_duration_ms = l->opt.lease_duration_ms,
		.renew_deadline_ms = l->opt.renew_deadline_ms,
	};
	leader_action_t a = leader_decide(&s);
	switch (a) {
	case LEADER_CREATE:
		leader_write(l, LEADER_OP_CREATE);
		break;
	case LEADER_ACQUIRE:
	case LEADER_RENEW:
		leader_write(l, LEADER_OP_UPDATE);
		break;
	case LEADER_WAIT: {
		leader_set_state(l, LEADER_STANDBY, "lease held by another");
		/* Try again at the retry period, or the moment the lease expires if sooner. */
		uint64_t expires_in =
			l->observed_ms + leader_record_duration_ms(&l->record, l->opt.lease_duration_ms) - now;
		uint64_t delay = leader_retry_delay(l);
		leader_schedule(l, expires_in < delay ? expires_in : delay);
		break;
	}
	case LEADER_LOSE:
		if (now >= l->last_renew_ms + l->opt.renew_deadline_ms)
			leader_check_deadline(l);
		else if (!l->record.present)
			leader_lose(l, "lease deleted by another");
		else if (l->record.holder[0] == '\0')
			leader_lose(l, "lease cleared by another");
		else
			leader_lose(l, "lease taken by another");
		break;
	}
}

static void leader_on_read(leader_t *l, const kube_http_response_t *resp)
{
	char err[256];
	if (resp->status == 404) {
		leader_note_success(l);
		leader_record_t absent = { .present = false };
		leader_observe(l, NULL, &absent);
		leader_act(l);
		return;
	}
	if (resp->error != NULL) {
		leader_failed(l, "read", resp->error);
		return;
	}
	cJSON *obj = cJSON_ParseWithLength(resp->body, resp->body_len);
	leader_record_t rec;
	if (leader_record_from_json(obj, &rec, err, sizeof(err)) != 0) {
		cJSON_Delete(obj);
		leader_failed(l, "read", err);
		return;
	}
	leader_note_success(l);
	leader_observe(l, obj, &rec);
	leader_act(l);
}

static void leader_on_written(leader_t *l, const kube_http_response_t *resp, leader_op_t op)
{
	char err[256];
	if (resp->status == 409 || resp->status == 404) {
		/*
		 * Someone else wrote first (or created it, or deleted it): read
		 * their version now and decide again. We do not lead on a guess.
		 */
		log_debug("lease write conflicted; reading it again", "lease", l->lease_key, "reason",
			  resp->reason ? resp->reason : "?");
		leader_read(l);
		return;
	}
	cJSON *obj = NULL;
	leader_record_t rec;
	if (resp->error == NULL) {
		obj = cJSON_ParseWithLength(resp->body, resp->body_len);
		if (leader_record_from_json(obj, &rec, err, sizeof(err)) != 0) {
			cJSON_Delete(obj);
			obj = NULL;
		}
	}
	if (obj == NULL) {
		leader_failed(l, leader_op_name(op), resp->error ? resp->error : err);
		return;
	}
	leader_note_success(l);
	leader_observe(l, obj, &rec);
	l->last_renew_ms = l->sent_ms;
	uint64_t now = leader_now(l);
	uint64_t deadline = l->last_renew_ms + l->opt.renew_deadline_ms;
	bool started = l->state != LEADER_LEADING;
	leader_set_state(l, LEADER_LEADING, op == LEADER_OP_CREATE ? "created the lease" : "acquired the lease");
	uv_timer_start(&l->deadline_timer, leader_on_deadline, deadline > now ? deadline - now : 0, 0);
	leader_schedule(l, leader_retry_delay(l));
	if (started && l->opt.on_started_leading)
		l->opt.on_started_leading(l->opt.data); /* last: it may release or stop us */
}

/* Start the GET of the Lease; -1 (nothing in flight) when the request cannot start. */
static int leader_send_read(leader_t *l)
{
	kube_http_req_t req = {
		.method = "GET",
		.path = l->path,
		.timeout_ms = (long)l->opt.renew_deadline_ms,
		.max_body = 1u << 20,
	};
	l->op = LEADER_OP_READ;
	l->abandoned = false;
	if (kube_http_request(l->http, &req, leader_on_response, l, &l->call) != 0) {
		l->call = NULL;
		l->op = LEADER_OP_NONE;
		return -1;
	}
	return 0;
}

static void leader_read(leader_t *l)
{
	if (leader_send_read(l) != 0)
		leader_failed(l, "read", "cannot start the request");
}

static void leader_on_tick(uv_timer_t *t)
{
	leader_t *l = t->data;
	leader_check_deadline(l);
	if (!leader_active(l))
		return;
	if (l->call != NULL) {
		/* The last request is still out (a slow server): check again later. */
		leader_schedule(l, leader_retry_delay(l));
		return;
	}
	/* A leader renews what it wrote last without reading first; a 409 makes it read. */
	if (l->state == LEADER_LEADING && l->object != NULL)
		leader_write(l, LEADER_OP_UPDATE);
	else
		leader_read(l);
}

/* ---- release and stop ---------------------------------------------------- */

static void leader_handle_closed(uv_handle_t *handle)
{
	leader_t *l = handle->data;
	if (--l->open_handles > 0)
		return;
	void (*done)(void *) = l->release_pending ? l->release_done : NULL;
	void *done_data = l->release_data;
	void (*cb)(void *) = l->on_stopped;
	void *data = l->stopped_data;
	cJSON_Delete(l->object);
	leader_record_free(&l->record);
	free((char *)l->opt.namespace);
	free((char *)l->opt.name);
	free((char *)l->opt.identity);
	free(l->path);
	free(l->collection);
	free(l->lease_key);
	free(l);
	if (done)
		done(done_data);
	if (cb)
		cb(data);
}

/* Nothing is in flight any more: close the timers; memory goes in their close callbacks. */
static void leader_finish_stop(leader_t *l)
{
	l->open_handles = 2;
	uv_close((uv_handle_t *)&l->retry_timer, leader_handle_closed);
	uv_close((uv_handle_t *)&l->deadline_timer, leader_handle_closed);
}

static void leader_release_finish(leader_t *l, const char *why)
{
	leader_set_state(l, LEADER_STOPPED, why);
	uv_timer_stop(&l->retry_timer);
	uv_timer_stop(&l->deadline_timer);
	if (!l->release_pending)
		return;
	l->release_pending = false;
	if (l->release_done)
		l->release_done(l->release_data);
}

/* Write the release if we led and know the object to write; otherwise just finish. */
static void leader_release_send(leader_t *l)
{
	bool ours = l->object != NULL && l->record.present && l->record.holder &&
		    strcmp(l->record.holder, l->opt.identity) == 0;
	if (!l->release_was_leading || !ours) {
		leader_release_finish(l, "released");
		return;
	}
	l->release_was_leading = false; /* write at most once */
	leader_write(l, LEADER_OP_RELEASE);
}

static void leader_on_release_step(uv_timer_t *t)
{
	leader_t *l = t->data;
	if (l->stopping || l->state != LEADER_RELEASING)
		return;
	if (l->release_was_leading && l->opt.on_stopped_leading) {
		l->opt.on_stopped_leading(l->opt.data);
		if (l->stopping || l->state != LEADER_RELEASING)
			return;
	}
	if (l->call != NULL) {
		l->release_waiting = true; /* the cancelled call's answer continues */
		return;
	}
	leader_release_send(l);
}

/*
 * An answer that arrived while releasing (the renewal or read that was out
 * when the release was asked for, the re-read after a conflict, the release
 * itself): when it carries the Lease, keep it, so a release is written over
 * the latest resourceVersion instead of meeting a 409.
 */
static void leader_observe_answer(leader_t *l, const kube_http_response_t *resp)
{
	char err[256];
	if (resp->error != NULL || resp->body_len == 0)
		return;
	cJSON *obj = cJSON_ParseWithLength(resp->body, resp->body_len);
	leader_record_t rec;
	if (leader_record_from_json(obj, &rec, err, sizeof(err)) == 0)
		leader_observe(l, obj, &rec);
	else
		cJSON_Delete(obj);
}

/* The release did not happen: the Lease runs out on its own. */
static void leader_release_failed(leader_t *l, const char *error)
{
	log_warn("could not release the lease; it expires on its own", "lease", l->lease_key, "error", error);
	leader_release_finish(l, "release failed");
}

static void leader_on_released(leader_t *l, const kube_http_response_t *resp)
{
	if (resp->status == 409 && l->release_conflicts++ == 0) {
		/* A renewal that was out when the release was asked for landed first: read, then release if still ours. */
		l->release_was_leading = true;
		l->release_waiting = true;
		if (leader_send_read(l) != 0) {
			l->release_waiting = false;
			leader_release_failed(l, "cannot start the request");
		}
		return;
	}
	if (resp->error != NULL) {
		leader_release_failed(l, resp->error);
		return;
	}
	leader_observe_answer(l, resp);
	leader_release_finish(l, "released the lease");
}

static void leader_on_response(const kube_http_response_t *resp, void *data)
{
	leader_t *l = data;
	leader_op_t op = l->op;
	bool abandoned = l->abandoned;
	l->call = NULL;
	l->op = LEADER_OP_NONE;
	l->abandoned = false;
	if (l->stopping) {
		leader_finish_stop(l);
		return;
	}
	if (l->state == LEADER_RELEASING) {
		if (op == LEADER_OP_RELEASE) {
			leader_on_released(l, resp);
		} else if (l->release_waiting) {
			l->release_waiting = false;
			leader_observe_answer(l, resp);
			leader_release_send(l);
		}
		return;
	}
	if (abandoned || !leader_active(l))
		return; /* whoever abandoned it has scheduled what comes next */
	if (op == LEADER_OP_READ)
		leader_on_read(l, resp);
	else
		leader_on_written(l, resp, op);
}

/* ---- public -------------------------------------------------------------- */

/* A DNS-1123 subdomain, as Kubernetes wants for namespaces and Lease names: also safe in a URL path. */
static bool leader_valid_name(const char *s)
{
	if (s == NULL || s[0] == '\0' || strlen(s) > 253)
		return false;
	for (const char *p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-' || *p == '.'))
			return false;
	return true;
}

int leader_start(uv_loop_t *loop, kube_http_t *http, const leader_options_t *opt, leader_t **out)
{
	leader_options_t o = *opt;
	if (o.lease_duration_ms == 0)
		o.lease_duration_ms = LEADER_DEFAULT_LEASE_DURATION_MS;
	if (o.renew_deadline_ms == 0)
		o.renew_deadline_ms = LEADER_DEFAULT_RENEW_DEADLINE_MS;
	if (o.retry_period_ms == 0)
		o.retry_period_ms = LEADER_DEFAULT_RETRY_PERIOD_MS;
	const char *bad = NULL;
	if (!leader_valid_name(o.namespace))
		bad = "namespace is not a valid name";
	else if (!leader_valid_name(o.name))
		bad = "lease name is not a valid name";
	else if (o.identity == NULL || o.identity[0] == '\0')
		bad = "identity is empty";
	else if (o.renew_deadline_ms >= o.lease_duration_ms)
		bad = "renew deadline must be shorter than the lease duration";
	else if (o.retry_period_ms >= o.renew_deadline_ms)
		bad = "retry period must be shorter than the renew deadline";
	else if (o.lease_duration_ms > (uint64_t)INT32_MAX * 1000u)
		bad = "lease duration too long";
	if (bad != NULL) {
		log_error("cannot start leader election", "error", bad);
		return UV_EINVAL;
	}
	leader_t *l = xcalloc(1, sizeof(*l));
	l->loop = loop;
	l->http = http;
	l->opt = o;
	l->opt.namespace = xstrdup(o.namespace);
	l->opt.name = xstrdup(o.name);
	l->opt.identity = xstrdup(o.identity);
	l->collection = xasprintf("/apis/coordination.k8s.io/v1/namespaces/%s/leases", o.namespace);
	l->path = xasprintf("%s/%s", l->collection, o.name);
	l->lease_key = xasprintf("%s/%s", o.namespace, o.name);
	l->state = LEADER_STARTING;
	uv_timer_init(loop, &l->retry_timer);
	uv_timer_init(loop, &l->deadline_timer);
	l->retry_timer.data = l;
	l->deadline_timer.data = l;
	/* The first read goes out from the loop: nothing happens inside this call. */
	leader_schedule(l, 0);
	*out = l;
	return 0;
}

bool leader_is_leader(const leader_t *l)
{
	if (l->state != LEADER_LEADING)
		return false;
	uv_update_time(l->loop);
	return uv_now(l->loop) < l->last_renew_ms + l->opt.lease_duration_ms;
}

const char *leader_holder(const leader_t *l)
{
	if (!l->observed)
		return NULL;
	return l->record.present && l->record.holder ? l->record.holder : "";
}

leader_state_t leader_state(const leader_t *l)
{
	return l->state;
}

int leader_release(leader_t *l, void (*done)(void *data), void *data)
{
	if (l->stopping || l->state == LEADER_RELEASING || l->state == LEADER_STOPPED)
		return UV_EALREADY;
	l->release_was_leading = l->state == LEADER_LEADING;
	leader_set_state(l, LEADER_RELEASING, "release requested");
	l->release_pending = true;
	l->release_done = done;
	l->release_data = data;
	uv_timer_stop(&l->deadline_timer);
	leader_abandon_call(l);
	/* on_stopped_leading and the write happen from the loop, not inside this call. */
	uv_timer_start(&l->retry_timer, leader_on_release_step, 0, 0);
	return 0;
}

void leader_stop(leader_t *l, void (*on_stopped)(void *data), void *data)
{
	if (l->stopping)
		return;
	leader_set_state(l, LEADER_STOPPED, "stopped");
	l->stopping = true;
	l->on_stopped = on_stopped;
	l->stopped_data = data;
	uv_timer_stop(&l->retry_timer);
	uv_timer_stop(&l->deadline_timer);
	if (l->call != NULL)
		leader_abandon_call(l); /* its answer finishes the stop */
	else
		leader_finish_stop(l);
}
