/*
 * kubectl drashift status PLAN [-w].
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int cli_verb_status(struct cli *c, int argc, char **argv)
{
	if (argc != 2)
		return cli_usage_error(c, argc < 2 ? "missing argument" : "too many arguments");
	cJSON *plan = cli_get_plan(c, argv[1]);
	if (plan == NULL)
		return 1;
	const cJSON *phase = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(plan, "status"), "phase");
	fprintf(c->out, "%s %s\n", argv[1], cJSON_IsString(phase) ? phase->valuestring : "(no status yet)");
	cJSON_Delete(plan);
	return 0;
}
