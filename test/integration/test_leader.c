/*
 * Leader election against a real API server: several candidates on one loop,
 * each with its own client, short timings (lease 3 s, renew deadline 2 s,
 * retry 0.5 s). Exactly one leads; a crashed leader is replaced once its lease
 * has expired and not before; a released lease is taken at once; a leader
 * whose Lease is overwritten, or who cannot reach the API server, stops
 * leading before anyone else can start. The Lease in the cluster (read with
 * kubectl) names the leader at every step.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "kube_http.h"
#include "kubeconfig.h"
#include "leader.h"
#include "testenv.h"
#include "xalloc.h"

#define LEASE_MS 3000u
#define DEADLINE_MS 2000u
#define RETRY_MS 500u
/* Room for the requests' own round trips on a loaded test machine. */
#define SLACK_MS 300u

static testenv_t env;

/* ---- a TCP relay that can be cut: a network partition for one client ----- */

typedef struct relay relay_t;

typedef struct relay_conn {
	uv_tcp_t down; /* from the client */
	uv_tcp_t up;   /* to the API server */
	uv_connect_t connect;
	relay_t *relay;
	int open;
	bool closing;
	struct relay_conn *next;
} relay_conn_t;

struct relay {
	uv_loop_t *loop;
	uv_tcp_t listener;
	struct sockaddr_in upstream;
	int port;
	bool partitioned;
	/* Holding: the server's answers wait in held[] until relay_release_answers; requests still pass. */
	bool holding;
	unsigned requests_seen; /* chunks passed from client to server */
	struct relay_held {
		relay_conn_t *conn;
		char *bytes;
		size_t n;
	} held[64];
	size_t n_held;
	relay_conn_t *conns;
};

typedef struct {
	uv_write_t req;
	char *bytes;
} relay_write_t;

static void relay_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
	(void)h;
	*buf = uv_buf_init(xmalloc(suggested), (unsigned)suggested);
}

static void relay_conn_closed(uv_handle_t *h)
{
	relay_conn_t *c = h->data;
	if (--c->open > 0)
		return;
	relay_t *r = c->relay;
	for (relay_conn_t **p = &r->conns; *p; p = &(*p)->next)
		if (*p == c) {
			*p = c->next;
			break;
		}
	free(c);
}

static void relay_conn_close(relay_conn_t *c)
{
	if (c->closing)
		return;
	c->closing = true;
	uv_close((uv_handle_t *)&c->down, relay_conn_closed);
	uv_close((uv_handle_t *)&c->up, relay_conn_closed);
}

static void relay_written(uv_write_t *req, int status)
{
	(void)status;
	relay_write_t *w = (relay_write_t *)req;
	free(w->bytes);
	free(w);
}

static void relay_on_read(uv_stream_t *from, ssize_t n, const uv_buf_t *buf)
{
	relay_conn_t *c = from->data;
	if (n < 0) {
		free(buf->base);
		relay_conn_close(c);
		return;
	}
	if (n == 0 || c->relay->partitioned) {
		free(buf->base);
		return;
	}
	uv_stream_t *to = from == (uv_stream_t *)&c->down ? (uv_stream_t *)&c->up : (uv_stream_t *)&c->down;
	if (from == (uv_stream_t *)&c->down)
		c->relay->requests_seen++;
	else if (c->relay->holding && c->relay->n_held < sizeof(c->relay->held) / sizeof(c->relay->held[0])) {
		c->relay->held[c->relay->n_held++] = (struct relay_held){ .conn = c, .bytes = buf->base, .n = (size_t)n };
		return;
	}
	relay_write_t *w = xcalloc(1, sizeof(*w));
	w->bytes = buf->base;
	uv_buf_t out = uv_buf_init(buf->base, (unsigned)n);
	if (uv_write(&w->req, to, &out, 1, relay_written) != 0) {
		free(w->bytes);
		free(w);
		relay_conn_close(c);
	}
}

static void relay_on_connected(uv_connect_t *req, int status)
{
	relay_conn_t *c = req->data;
	if (status != 0 || c->closing) {
		relay_conn_close(c);
		return;
	}
	if (c->relay->partitioned)
		return; /* connected, but nothing passes */
	uv_read_start((uv_stream_t *)&c->down, relay_alloc, relay_on_read);
	uv_read_start((uv_stream_t *)&c->up, relay_alloc, relay_on_read);
}

static void relay_on_connection(uv_stream_t *server, int status)
{
	relay_t *r = server->data;
	if (status != 0)
		return;
	relay_conn_t *c = xcalloc(1, sizeof(*c));
	c->relay = r;
	uv_tcp_init(r->loop, &c->down);
	uv_tcp_init(r->loop, &c->up);
	c->down.data = c->up.data = c->connect.data = c;
	c->open = 2;
	c->next = r->conns;
	r->conns = c;
	if (uv_accept(server, (uv_stream_t *)&c->down) != 0) {
		relay_conn_close(c);
		return;
	}
	/* Partitioned: the connection is accepted and then hangs, as behind a dead link. */
	if (uv_tcp_connect(&c->connect, &c->up, (const struct sockaddr *)&r->upstream, relay_on_connected) != 0)
		relay_conn_close(c);
}

static void relay_start(relay_t *r, uv_loop_t *loop, const char *server_url)
{
	memset(r, 0, sizeof(*r));
	r->loop = loop;
	const char *colon = strrchr(server_url, ':');
	assert_non_null(colon);
	assert_int_equal(uv_ip4_addr("127.0.0.1", (int)strtol(colon + 1, NULL, 10), &r->upstream), 0);
	struct sockaddr_in any;
	uv_ip4_addr("127.0.0.1", 0, &any);
	uv_tcp_init(loop, &r->listener);
	r->listener.data = r;
	assert_int_equal(uv_tcp_bind(&r->listener, (const struct sockaddr *)&any, 0), 0);
	assert_int_equal(uv_listen((uv_stream_t *)&r->listener, 16, relay_on_connection), 0);
	struct sockaddr_in bound;
	int len = sizeof(bound);
	uv_tcp_getsockname(&r->listener, (struct sockaddr *)&bound, &len);
	r->port = ntohs(bound.sin_port);
}

/* Cut every connection, old and new: bytes stop flowing, nothing is closed. */
static void relay_partition(relay_t *r)
{
	r->partitioned = true;
	for (relay_conn_t *c = r->conns; c; c = c->next) {
		uv_read_stop((uv_stream_t *)&c->down);
		uv_read_stop((uv_stream_t *)&c->up);
	}
}

/* Deliver the held answers, in order, to the connections still open. */
static void relay_release_answers(relay_t *r)
{
	r->holding = false;
	for (size_t i = 0; i < r->n_held; i++) {
		struct relay_held *h = &r->held[i];
		bool open = false;
		for (relay_conn_t *c = r->conns; c; c = c->next)
			open |= c == h->conn && !c->closing;
		relay_write_t *w = xcalloc(1, sizeof(*w));
		w->bytes = h->bytes;
		uv_buf_t out = uv_buf_init(h->bytes, (unsigned)h->n);
		if (!open || uv_write(&w->req, (uv_stream_t *)&h->conn->down, &out, 1, relay_written) != 0) {
			free(w->bytes);
			free(w);
		}
	}
	r->n_held = 0;
}

static void relay_close(relay_t *r)
{
	uv_close((uv_handle_t *)&r->listener, NULL);
	for (relay_conn_t *c = r->conns; c; c = c->next)
		relay_conn_close(c);
}

/* ---- candidates ----------------------------------------------------------- */

typedef struct world world_t;

typedef struct {
	world_t *w;
	const char *identity;
	kube_http_t *http;
	leader_t *leader;
	unsigned started, stopped;     /* callbacks seen */
	uint64_t started_at, stopped_at; /* uv_now at the latest of each */
	bool leader_when_stopped;      /* leader_is_leader() inside on_stopped_leading */
	bool released;                 /* leader_release's done ran */
} candidate_t;

struct world {
	uv_loop_t loop;
	candidate_t c[3];
	unsigned overlaps; /* moments at which two candidates both said they lead */
	relay_t relay;
	bool relay_used;
};

static uint64_t world_now(world_t *w)
{
	uv_update_time(&w->loop);
	return uv_now(&w->loop);
}

static unsigned world_leaders(world_t *w)
{
	unsigned n = 0;
	for (int i = 0; i < 3; i++)
		if (w->c[i].leader && leader_is_leader(w->c[i].leader))
			n++;
	return n;
}

static void on_started(void *data)
{
	candidate_t *c = data;
	c->started++;
	c->started_at = uv_now(&c->w->loop);
	if (world_leaders(c->w) > 1)
		c->w->overlaps++;
}

static void on_stopped(void *data)
{
	candidate_t *c = data;
	c->stopped++;
	c->stopped_at = uv_now(&c->w->loop);
	c->leader_when_stopped = leader_is_leader(c->leader);
}

static void on_released(void *data)
{
	((candidate_t *)data)->released = true;
}

/* Start candidate c; through the relay when via_relay. */
static void candidate_start(world_t *w, candidate_t *c, const char *identity, const char *lease,
			    bool via_relay)
{
	char err[512];
	kubeconfig_t cfg;
	if (kubeconfig_load_files(env.kubeconfig, NULL, &cfg, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	if (via_relay) {
		if (!w->relay_used)
			relay_start(&w->relay, &w->loop, cfg.server);
		w->relay_used = true;
		free(cfg.server);
		cfg.server = xasprintf("https://127.0.0.1:%d", w->relay.port);
	}
	memset(c, 0, sizeof(*c));
	c->w = w;
	c->identity = identity;
	if (kube_http_init(&w->loop, &cfg, &c->http, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	kubeconfig_free(&cfg);
	leader_options_t opt = {
		.namespace = "default",
		.name = lease,
		.identity = identity,
		.lease_duration_ms = LEASE_MS,
		.renew_deadline_ms = DEADLINE_MS,
		.retry_period_ms = RETRY_MS,
		.on_started_leading = on_started,
		.on_stopped_leading = on_stopped,
		.data = c,
	};
	assert_int_equal(leader_start(&w->loop, c->http, &opt, &c->leader), 0);
}

/* SIGKILL: no release, no more requests; the Lease is left as it was. */
static void candidate_crash(candidate_t *c)
{
	leader_stop(c->leader, NULL, NULL);
	c->leader = NULL;
	kube_http_close(c->http);
	c->http = NULL;
}

static void world_init(world_t *w)
{
	memset(w, 0, sizeof(*w));
	assert_int_equal(uv_loop_init(&w->loop), 0);
}

/* Stop everything and prove nothing is left on the loop (ASan/LSan check the memory). */
static void world_end(world_t *w)
{
	for (int i = 0; i < 3; i++) {
		candidate_t *c = &w->c[i];
		if (c->leader)
			leader_stop(c->leader, NULL, NULL);
		if (c->http)
			kube_http_close(c->http);
		c->leader = NULL;
		c->http = NULL;
	}
	if (w->relay_used)
		relay_close(&w->relay);
	uv_run(&w->loop, UV_RUN_DEFAULT);
	assert_int_equal(uv_loop_close(&w->loop), 0);
}

typedef struct {
	world_t *w;
	candidate_t *c;
	unsigned count;
} wait_t;

static bool check_overlap(world_t *w)
{
	if (world_leaders(w) > 1)
		w->overlaps++;
	return false;
}

static bool one_leads(void *data)
{
	world_t *w = data;
	check_overlap(w);
	return world_leaders(w) == 1;
}

static bool started_count(void *data)
{
	wait_t *wt = data;
	check_overlap(wt->w);
	return wt->c->started >= wt->count;
}

static bool stopped_count(void *data)
{
	wait_t *wt = data;
	check_overlap(wt->w);
	return wt->c->stopped >= wt->count;
}

static bool nothing(void *data)
{
	return check_overlap(data);
}

static bool released(void *data)
{
	return ((candidate_t *)data)->released;
}

static candidate_t *the_leader(world_t *w)
{
	for (int i = 0; i < 3; i++)
		if (w->c[i].leader && leader_is_leader(w->c[i].leader))
			return &w->c[i];
	return NULL;
}

/* The Lease in the cluster names holder with this many transitions. */
static void expect_lease(const char *lease, const char *holder, int transitions)
{
	char *out;
	int rc = testenv_sh_output(&env, &out,
				   "kubectl -n default get lease %s -o jsonpath='{.spec.holderIdentity}/{.spec.leaseTransitions}'",
				   lease);
	char want[128];
	snprintf(want, sizeof(want), "%s/%d", holder, transitions);
	if (rc != 0 || strcmp(out, want) != 0)
		fail_msg("lease %s is \"%s\" (kubectl exit %d), expected \"%s\"", lease, out, rc, want);
	free(out);
}

/* ---- tests ---------------------------------------------------------------- */

static void test_one_leads_crash_is_replaced_after_expiry_release_at_once(void **state)
{
	(void)state;
	world_t *w = xcalloc(1, sizeof(*w));
	world_init(w);
	candidate_start(w, &w->c[0], "a", "election-crash", false);
	candidate_start(w, &w->c[1], "b", "election-crash", false);

	/* Both find no Lease and create it: one create wins, the other waits. */
	assert_true(testenv_run_until(&w->loop, one_leads, w, 15000));
	candidate_t *first = the_leader(w);
	candidate_t *second = first == &w->c[0] ? &w->c[1] : &w->c[0];
	testenv_run_until(&w->loop, nothing, w, 1500);
	assert_int_equal(w->overlaps, 0);
	assert_ptr_equal(the_leader(w), first);
	assert_int_equal(first->started, 1);
	assert_int_equal(first->stopped, 0);
	assert_int_equal(second->started, 0);
	assert_int_equal(leader_state(second->leader), LEADER_STANDBY);
	assert_string_equal(leader_holder(second->leader), first->identity);
	expect_lease("election-crash", first->identity, 0);

	/* The leader dies without a word: the other waits out the lease, then takes it. */
	uint64_t t0 = world_now(w);
	candidate_crash(first);
	wait_t wt = { .w = w, .c = second, .count = 1 };
	assert_true(testenv_run_until(&w->loop, started_count, &wt, 10000));
	uint64_t takeover = second->started_at - t0;
	printf("takeover after a crash: %llu ms (lease %u, retry %u)\n", (unsigned long long)takeover, LEASE_MS,
	       RETRY_MS);
	/* Not before the lease (renewed at most one retry period before the crash) ran out... */
	assert_true(takeover >= LEASE_MS - RETRY_MS - SLACK_MS);
	/* ...and within a lease duration and a retry period of the crash. */
	assert_true(takeover <= LEASE_MS + RETRY_MS + SLACK_MS);
	expect_lease("election-crash", second->identity, 1);

	/* The crashed one comes back as a new instance: the lease is live, so it waits. */
	candidate_t *back = &w->c[2];
	candidate_start(w, back, first->identity, "election-crash", false);
	testenv_run_until(&w->loop, nothing, w, 1500);
	assert_int_equal(back->started, 0);
	assert_int_equal(leader_state(back->leader), LEADER_STANDBY);
	assert_string_equal(leader_holder(back->leader), second->identity);

	/* A clean shutdown hands over at once instead of after the lease duration. */
	uint64_t t1 = world_now(w);
	assert_int_equal(leader_release(second->leader, on_released, second), 0);
	assert_false(leader_is_leader(second->leader)); /* at once, before any callback */
	assert_int_equal(second->stopped, 0);           /* callbacks come from the loop */
	assert_false(second->released);
	wt = (wait_t){ .w = w, .c = back, .count = 1 };
	assert_true(testenv_run_until(&w->loop, started_count, &wt, 5000));
	uint64_t handover = back->started_at - t1;
	printf("takeover after a release: %llu ms\n", (unsigned long long)handover);
	assert_true(handover <= 2000);
	assert_true(second->released);
	assert_int_equal(second->stopped, 1);
	assert_false(second->leader_when_stopped);
	assert_int_equal(leader_state(second->leader), LEADER_STOPPED);
	assert_int_equal(leader_release(second->leader, on_released, second), UV_EALREADY);
	assert_int_equal(w->overlaps, 0);
	expect_lease("election-crash", back->identity, 2);
	world_end(w);
	free(w);
}

static bool requests_after(void *data)
{
	wait_t *wt = data;
	return wt->w->relay.requests_seen >= wt->count;
}

/*
 * A release asked for while a renewal is out, which the server applies but
 * whose answer never reaches the leader: the release, written over the
 * resourceVersion before the renewal, meets a 409. The leader reads the
 * Lease again and releases it anyway, so the successor need not wait out
 * the lease (what a SIGTERM during a renewal looks like).
 */
static void test_release_during_a_renewal_still_releases(void **state)
{
	(void)state;
	world_t *w = xcalloc(1, sizeof(*w));
	world_init(w);
	candidate_t *c = &w->c[0];
	candidate_start(w, c, "renewing", "election-release-race", true);
	wait_t wt = { .w = w, .c = c, .count = 1 };
	assert_true(testenv_run_until(&w->loop, started_count, &wt, 15000));
	testenv_run_until(&w->loop, nothing, w, 1200); /* a renewal or two through the relay */

	w->relay.holding = true;
	wt.count = w->relay.requests_seen + 1;
	assert_true(testenv_run_until(&w->loop, requests_after, &wt, 5000)); /* the next renewal is out */
	testenv_run_until(&w->loop, nothing, w, 300);                       /* and applied by the server */
	assert_true(w->relay.n_held > 0);                                    /* its answer held back */
	assert_int_equal(leader_release(c->leader, on_released, c), 0);
	testenv_run_until(&w->loop, nothing, w, 50);
	relay_release_answers(&w->relay);

	wt.count = 1;
	assert_true(testenv_run_until(&w->loop, released, c, 5000));
	expect_lease("election-release-race", "", 0);
	world_end(w);
	free(w);
}

static void test_leader_whose_lease_is_overwritten_stops(void **state)
{
	(void)state;
	world_t *w = xcalloc(1, sizeof(*w));
	world_init(w);
	candidate_start(w, &w->c[0], "a", "election-overwrite", false);
	candidate_start(w, &w->c[1], "b", "election-overwrite", false);
	assert_true(testenv_run_until(&w->loop, one_leads, w, 15000));
	candidate_t *l = the_leader(w);
	candidate_t *other = l == &w->c[0] ? &w->c[1] : &w->c[0];

	/* Someone else writes the holder (kubectl blocks the loop meanwhile). */
	uint64_t t0 = world_now(w);
	assert_int_equal(testenv_sh(&env, "kubectl -n default patch lease election-overwrite --type merge "
					  "-p '{\"spec\":{\"holderIdentity\":\"intruder\"}}' >/dev/null"),
			 0);
	wait_t wt = { .w = w, .c = l, .count = 1 };
	assert_true(testenv_run_until(&w->loop, stopped_count, &wt, 5000));
	uint64_t noticed = l->stopped_at - t0;
	printf("overwritten lease noticed after %llu ms (kubectl included)\n", (unsigned long long)noticed);
	assert_true(noticed <= RETRY_MS + 1500);
	assert_false(l->leader_when_stopped);
	assert_false(leader_is_leader(l->leader));
	assert_int_equal(leader_state(l->leader), LEADER_STANDBY);
	assert_string_equal(leader_holder(l->leader), "intruder");

	/* "intruder" never renews: after its lease duration one of the two takes over. */
	assert_true(testenv_run_until(&w->loop, one_leads, w, 10000));
	candidate_t *next = the_leader(w);
	uint64_t retaken = (next == l ? l->started_at : other->started_at) - t0;
	printf("lease retaken from the intruder after %llu ms\n", (unsigned long long)retaken);
	assert_true(retaken >= LEASE_MS);
	assert_true(retaken <= LEASE_MS + RETRY_MS + 1500);
	assert_int_equal(w->overlaps, 0);
	expect_lease("election-overwrite", next->identity, 1);
	world_end(w);
	free(w);
}

static void test_partitioned_leader_stops_before_anyone_else_starts(void **state)
{
	(void)state;
	world_t *w = xcalloc(1, sizeof(*w));
	world_init(w);
	candidate_t *a = &w->c[0], *b = &w->c[1];
	candidate_start(w, a, "a", "election-partition", true);
	wait_t wt = { .w = w, .c = a, .count = 1 };
	assert_true(testenv_run_until(&w->loop, started_count, &wt, 15000));
	candidate_start(w, b, "b", "election-partition", false);
	testenv_run_until(&w->loop, nothing, w, 1000);
	assert_int_equal(leader_state(b->leader), LEADER_STANDBY);

	/* a's link to the API server goes dead: its renewals hang in flight. */
	uint64_t t0 = world_now(w);
	relay_partition(&w->relay);
	wt = (wait_t){ .w = w, .c = a, .count = 1 };
	assert_true(testenv_run_until(&w->loop, stopped_count, &wt, 5000));
	uint64_t stopped = a->stopped_at - t0;
	printf("partitioned leader stopped after %llu ms (renew deadline %u)\n", (unsigned long long)stopped,
	       DEADLINE_MS);
	assert_true(stopped >= DEADLINE_MS - RETRY_MS - SLACK_MS);
	assert_true(stopped <= DEADLINE_MS + 100);
	assert_false(a->leader_when_stopped);

	wt = (wait_t){ .w = w, .c = b, .count = 1 };
	assert_true(testenv_run_until(&w->loop, started_count, &wt, 10000));
	printf("the other started %llu ms after the partitioned leader stopped\n",
	       (unsigned long long)(b->started_at - a->stopped_at));
	/* The lease outlives the renew deadline by a second: that is the margin. */
	assert_true(b->started_at >= a->stopped_at + (LEASE_MS - DEADLINE_MS) / 2);
	assert_true(b->started_at - t0 <= LEASE_MS + RETRY_MS + SLACK_MS);
	assert_int_equal(w->overlaps, 0);
	assert_false(leader_is_leader(a->leader));
	expect_lease("election-partition", "b", 1);
	world_end(w);
	free(w);
}

static void test_leadership_ends_with_the_lease_even_if_the_loop_stalls(void **state)
{
	(void)state;
	world_t *w = xcalloc(1, sizeof(*w));
	world_init(w);
	candidate_t *a = &w->c[0];
	candidate_start(w, a, "a", "election-stall", false);
	wait_t wt = { .w = w, .c = a, .count = 1 };
	assert_true(testenv_run_until(&w->loop, started_count, &wt, 15000));
	assert_true(leader_is_leader(a->leader));

	/* A long blocking call: no timer can run, the lease runs out meanwhile. */
	usleep((LEASE_MS + 200) * 1000);
	assert_int_equal(leader_state(a->leader), LEADER_LEADING); /* nothing has run... */
	assert_false(leader_is_leader(a->leader));                 /* ...but the answer is already no */

	/* Once the loop runs, the deadline is noticed, and the lease (still naming a) retaken. */
	wt = (wait_t){ .w = w, .c = a, .count = 1 };
	assert_true(testenv_run_until(&w->loop, stopped_count, &wt, 1000));
	assert_false(a->leader_when_stopped);
	wt = (wait_t){ .w = w, .c = a, .count = 2 };
	assert_true(testenv_run_until(&w->loop, started_count, &wt, 3000));
	assert_true(leader_is_leader(a->leader));
	expect_lease("election-stall", "a", 0); /* same holder: not a transition */
	world_end(w);
	free(w);
}

static void test_bad_options_are_refused(void **state)
{
	(void)state;
	uv_loop_t loop;
	uv_loop_init(&loop);
	leader_t *l = NULL;
	leader_options_t bad[] = {
		{ .namespace = "default", .name = "x", .identity = "a", .lease_duration_ms = 2000,
		  .renew_deadline_ms = 2000 },
		{ .namespace = "default", .name = "x", .identity = "a", .renew_deadline_ms = 3000,
		  .retry_period_ms = 3000 },
		{ .namespace = "default", .name = "x", .identity = "" },
		{ .namespace = "default", .name = "../x", .identity = "a" },
		{ .namespace = NULL, .name = "x", .identity = "a" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(leader_start(&loop, NULL, &bad[i], &l), UV_EINVAL);
	assert_null(l);
	assert_int_equal(uv_loop_close(&loop), 0);
}

static int setup(void **state)
{
	(void)state;
	testenv_up(&env, "leader", NULL);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	testenv_down(&env);
	return 0;
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_options_are_refused),
		cmocka_unit_test(test_one_leads_crash_is_replaced_after_expiry_release_at_once),
		cmocka_unit_test(test_leader_whose_lease_is_overwritten_stops),
		cmocka_unit_test(test_partitioned_leader_stops_before_anyone_else_starts),
		cmocka_unit_test(test_release_during_a_renewal_still_releases),
		cmocka_unit_test(test_leadership_ends_with_the_lease_even_if_the_loop_stalls),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
