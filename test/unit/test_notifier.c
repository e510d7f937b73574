/*
 * Delivering notifications (controller/notifier.h) on a real libuv loop:
 * the bodies a status change gives each webhook (its events filter
 * applied), a full queue dropping its oldest notification with a count on
 * /metrics, a webhook nobody answers counted as failed after its retries,
 * and closing with notifications queued: nothing leaks, nothing is sent.
 * The end-to-end test (test/e2e/notifications.sh) delivers to receivers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "fixture.h"
#include "metrics.h"
#include "notifier.h"
#include "plan.h"
#include "xalloc.h"

/* Nothing listens on port 1 of loopback: every attempt is refused at once. */
#define PLAN_JSON                                                                                                  \
	"{'apiVersion':'drashift.io/v1alpha1','kind':'MigrationPlan','metadata':{'name':'gpu'},'spec':{"              \
	"'driver':'gpu.example.com','extendedResource':'example.com/gpu','deviceClassNames':['gpu.example.com'],"   \
	"'pools':[{'name':'a','nodeSelector':{'matchLabels':{'pool':'a'}}},"                                          \
	"{'name':'b','nodeSelector':{'matchLabels':{'pool':'b'}}}],"                                                  \
	"'notifications':{'webhooks':[{'name':'dead','url':'http://127.0.0.1:1/services/token','timeout':'300ms'},"  \
	"{'name':'chat','url':'http://127.0.0.1:1/chat','format':'Slack','events':['poolDone']}]}}}"

static void load_plan(plan_t *p)
{
	cJSON *obj = fixture_quoted_json(PLAN_JSON);
	char err[256];
	if (plan_decode(obj, p, err, sizeof(err)) != 0)
		fail_msg("decode: %s", err);
	cJSON_Delete(obj);
}

/* status.pools as phases of a and b, and whether a awaits approval. */
static cJSON *status(const char *a, const char *b, bool awaiting)
{
	char *json = xasprintf("{'frozen':false,'pools':[{'name':'a','phase':'%s','awaitingApproval':%s,'message':'m'},"
			       "{'name':'b','phase':'%s','message':'n'}]}",
			       a, awaiting ? "true" : "false", b);
	cJSON *st = fixture_quoted_json(json);
	free(json);
	return st;
}

typedef struct {
	uv_loop_t loop;
	metrics_registry_t *metrics;
	notifier_t *n;
	plan_t plan;
} fx_t;

static int setup(void **state)
{
	fx_t *f = xcalloc(1, sizeof(*f));
	uv_loop_init(&f->loop);
	f->metrics = metrics_registry_new();
	f->n = notifier_new(&f->loop);
	notifier_set_metrics(f->n, f->metrics);
	load_plan(&f->plan);
	*state = f;
	return 0;
}

static void on_close_walk(uv_handle_t *h, void *arg)
{
	(void)arg;
	fail_msg("a handle of type %s is still open", uv_handle_type_name(h->type));
}

static int teardown(void **state)
{
	fx_t *f = *state;
	notifier_close(f->n);
	uv_run(&f->loop, UV_RUN_DEFAULT);
	assert_false(notifier_busy(f->n));
	notifier_free(f->n);
	uv_walk(&f->loop, on_close_walk, NULL);
	assert_int_equal(uv_loop_close(&f->loop), 0);
	metrics_registry_free(f->metrics);
	plan_free(&f->plan);
	free(f);
	return 0;
}

static double counted(fx_t *f, const char *webhook, const char *event, const char *result)
{
	char *text = metrics_render(f->metrics, &(size_t){ 0 });
	char *key = xasprintf("drashift_notifications_total{plan=\"gpu\",webhook=\"%s\",event=\"%s\",result=\"%s\"} ",
			      webhook, event, result);
	const char *at = strstr(text, key);
	double v = at ? strtod(at + strlen(key), NULL) : 0;
	free(key);
	free(text);
	return v;
}

/* A canary waiting for approval, then pool a done: each webhook gets what its filter asks for. */
static void test_bodies_per_webhook(void **state)
{
	fx_t *f = *state;
	cJSON *canary = status("Canary", "Legacy", false), *waiting = status("Canary", "Legacy", true),
	      *done = status("DRA", "Canary", false);
	assert_null(notifier_decide(&f->plan, canary, canary, 1, "t"));
	assert_null(notifier_decide(&f->plan, NULL, done, 1, "t")); /* first status: nothing happened */
	notifier_batch_t *b = notifier_decide(&f->plan, canary, waiting, 1, "t");
	assert_non_null(b);
	notifier_send(f->n, b); /* dead only: chat asked for poolDone */
	b = notifier_decide(&f->plan, waiting, done, 2, "t");
	notifier_send(f->n, b); /* dead and chat */
	char *text = metrics_render(f->metrics, &(size_t){ 0 });
	assert_non_null(strstr(text, "drashift_notification_queue{plan=\"gpu\",webhook=\"dead\"} 2"));
	assert_non_null(strstr(text, "drashift_notification_queue{plan=\"gpu\",webhook=\"chat\"} 1"));
	assert_null(strstr(text, "token")); /* never a URL on /metrics */
	free(text);
	cJSON_Delete(canary);
	cJSON_Delete(waiting);
	cJSON_Delete(done);
}

/* More than NOTIFIER_QUEUE_MAX waiting: the oldest go, counted; closing drops the rest, counted. */
static void test_full_queue_drops_oldest(void **state)
{
	fx_t *f = *state;
	cJSON *canary = status("Canary", "Legacy", false), *waiting = status("Canary", "Legacy", true);
	for (int i = 0; i < NOTIFIER_QUEUE_MAX + 6; i++)
		notifier_send(f->n, notifier_decide(&f->plan, canary, waiting, i, "t"));
	assert_int_equal(counted(f, "dead", "awaitingApproval", "dropped"), 6);
	notifier_close(f->n);
	assert_int_equal(counted(f, "dead", "awaitingApproval", "dropped"), NOTIFIER_QUEUE_MAX + 6);
	assert_int_equal(counted(f, "dead", "awaitingApproval", "failed"), 0);
	cJSON_Delete(canary);
	cJSON_Delete(waiting);
}

static void on_check(uv_timer_t *t)
{
	fx_t *f = t->data;
	if (counted(f, "dead", "awaitingApproval", "failed") == 1)
		uv_close((uv_handle_t *)t, NULL);
}

/* A webhook nobody answers: tried until its timeout, then counted as failed (and logged without its URL). */
static void test_dead_webhook_fails_after_retries(void **state)
{
	fx_t *f = *state;
	cJSON *canary = status("Canary", "Legacy", false), *waiting = status("Canary", "Legacy", true);
	notifier_send(f->n, notifier_decide(&f->plan, canary, waiting, 1, "t"));
	assert_int_equal(counted(f, "dead", "awaitingApproval", "failed"), 0); /* never sent inside the call */
	uv_timer_t check;
	uv_timer_init(&f->loop, &check);
	check.data = f;
	uv_timer_start(&check, on_check, 10, 10);
	uv_run(&f->loop, UV_RUN_DEFAULT);
	assert_int_equal(counted(f, "dead", "awaitingApproval", "failed"), 1);
	char *text = metrics_render(f->metrics, &(size_t){ 0 });
	const char *key = "drashift_notification_attempts_total{plan=\"gpu\",webhook=\"dead\",code=\"error\"} ";
	const char *at = strstr(text, key);
	assert_non_null(at);
	/* How many attempts fit the timeout depends on the machine; that a 500 is retried, test/e2e/notifications.sh shows. */
	assert_true(strtod(at + strlen(key), NULL) >= 1);
	free(text);
	cJSON_Delete(canary);
	cJSON_Delete(waiting);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_bodies_per_webhook, setup, teardown),
		cmocka_unit_test_setup_teardown(test_full_queue_drops_oldest, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dead_webhook_fails_after_retries, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
