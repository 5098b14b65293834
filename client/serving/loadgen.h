/*
 * loadgen: a load of completions on a vLLM server's OpenAI-compatible
 * API (capture --vllm --load): N requests POST /v1/completions, C of
 * them in flight at once (nonblocking sockets and poll, httpc.h), each
 * {"model": M, "prompt": about P tokens, "max_tokens": O,
 * "ignore_eos": true} so that every answer is O tokens long.  The
 * request's body and the answers are built and read by pure functions
 * (unit-tested in tests/unit/test_loadgen.c).
 */
#ifndef SPYREMON_LOADGEN_H
#define SPYREMON_LOADGEN_H

#include <stdbool.h>
#include <stddef.h>

#define LOADGEN_MAX_CONCURRENCY	256
#define LOADGEN_MAX_TOKENS	1000000	/* prompt or output tokens */
#define LOADGEN_WHY		512
#define LOADGEN_EXCERPT		160	/* bytes of a body quoted */

struct loadgen_opts {
	const char *url;		/* the server, as httpc takes it */
	const char *model;
	long	 n;			/* requests */
	int	 concurrency;
	long	 prompt_tokens, output_tokens;
	int	 timeout_ms;		/* per request */
};

struct loadgen_result {
	long	 ok, failed;		/* requests answered 200 with usage */
	double	 prompt_tokens, completion_tokens;	/* their usage summed */
	char	 first_error[LOADGEN_WHY];	/* the first failure, if any */
};

/* A prompt of words words ("hello hello ..."), about one token each; free it. */
char *loadgen_prompt(long words);

/*
 * The JSON body of one completion request; *len its length; free it.
 * NULL if out of memory.
 */
char *loadgen_body(const char *model, long prompt_tokens,
    long output_tokens, size_t *len);

/*
 * The usage of a completion's answer body: 0 with *prompt and
 * *completion, or -1 with why naming what is missing.
 */
int loadgen_parse_completion(const char *body, size_t len, double *prompt,
    double *completion, char *why, size_t whylen);

/*
 * The models of GET /v1/models' answer body: 0 with the first model's id
 * in first, and whether model (NULL: not asked) is among them in *found;
 * the ids, comma-separated, in list (up to listlen); -1 with why.
 */
int loadgen_parse_models(const char *body, size_t len, const char *model,
    char *first, size_t firstlen, bool *found, char *list, size_t listlen,
    char *why, size_t whylen);

/* body[0..len) for a message: at most LOADGEN_EXCERPT bytes, one line. */
void loadgen_excerpt(const char *body, size_t len, char *out, size_t outlen);

/*
 * The model to load url with: model if the server serves it, else (model
 * NULL) the first it serves.  0 with it in out, or -1 with why (no
 * answer, not listed: naming those it serves).
 */
int loadgen_model(const char *url, const char *model, int timeout_ms,
    char *out, size_t outlen, char *why, size_t whylen);

/*
 * Run the load o: every request sent, C at a time, each answered or
 * failed (an answer but 200 with its status and an excerpt of its body,
 * no answer within o->timeout_ms, no usage).  progress (if not NULL) is
 * called as requests finish.  0 when every request succeeded, else -1
 * (r says how many failed and the first failure).
 */
int loadgen_run(const struct loadgen_opts *o, struct loadgen_result *r,
    void (*progress)(void *arg, long done, long n), void *arg);

#endif
