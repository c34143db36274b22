/* SPDX-License-Identifier: MIT */
/*
 * Models for clang-tidy's static analyser, force-included by
 * scripts/lint.sh (never by a build). The analyser looks at one file at a
 * time, so it does not know what these library functions guarantee and
 * then follows paths that cannot happen:
 *   - err_set() and csv_err() return the code they are given (engine/err.c,
 *     engine/recording/csv.c), never 0;
 *   - cJSON_IsString() and the other cJSON type tests are false for NULL.
 * Each macro still calls the real function, so its arguments are checked.
 */
#ifndef LINT_MODELS_H
#define LINT_MODELS_H

#include <cjson/cJSON.h>

#include "csv.h"
#include "err.h"

#ifndef LINT_NO_ERR_MODEL
#define err_set(code, ...) \
	__extension__({ int lint_c_ = (code); err_set(lint_c_, __VA_ARGS__); lint_c_; })
#endif
#ifndef LINT_NO_CSV_MODEL
#define csv_err(c, code, ...) \
	__extension__({ int lint_c_ = (code); csv_err((c), lint_c_, __VA_ARGS__); lint_c_; })
#endif

#define LINT_CJSON_IS(f, x) \
	__extension__({ const cJSON *lint_j_ = (x); lint_j_ != NULL && f(lint_j_); })
#define cJSON_IsInvalid(x) LINT_CJSON_IS(cJSON_IsInvalid, x)
#define cJSON_IsFalse(x) LINT_CJSON_IS(cJSON_IsFalse, x)
#define cJSON_IsTrue(x) LINT_CJSON_IS(cJSON_IsTrue, x)
#define cJSON_IsBool(x) LINT_CJSON_IS(cJSON_IsBool, x)
#define cJSON_IsNull(x) LINT_CJSON_IS(cJSON_IsNull, x)
#define cJSON_IsNumber(x) LINT_CJSON_IS(cJSON_IsNumber, x)
#define cJSON_IsString(x) LINT_CJSON_IS(cJSON_IsString, x)
#define cJSON_IsArray(x) LINT_CJSON_IS(cJSON_IsArray, x)
#define cJSON_IsObject(x) LINT_CJSON_IS(cJSON_IsObject, x)
#define cJSON_IsRaw(x) LINT_CJSON_IS(cJSON_IsRaw, x)

#endif /* LINT_MODELS_H */
