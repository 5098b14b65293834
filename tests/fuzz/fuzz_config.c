/*
 * libFuzzer target: the config loader, config_parse() on the input as the
 * text of spyremond.yaml, then printing what it accepted and reading that
 * back, which must give an equal config (the round trip --print-config
 * promises).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config_errors errs;
	struct config *cfg, *again;
	char *text = NULL;
	size_t len = 0;
	FILE *fp;

	if (config_parse("fuzz.yaml", (const char *)data, size, &cfg,
	    &errs) == -1) {
		if (errs.n == 0)
			abort();	/* refused without a message */
		config_errors_free(&errs);
		return 0;
	}
	config_errors_free(&errs);
	if ((fp = open_memstream(&text, &len)) != NULL) {
		config_print(cfg, fp);
		fclose(fp);
		if (config_parse("printed.yaml", text, len, &again, &errs) == -1) {
			fprintf(stderr, "printed config refused:\n%s\n%s\n", text,
			    errs.n > 0 ? errs.msgs[0] : "");
			abort();
		}
		config_errors_free(&errs);
		config_free(again);
		free(text);
	}
	config_free(cfg);
	return 0;
}
