/* The C API's embedding part from C: the knob table row by row (what the
 * Open MPI component registers as btl_tent_<key>), and engine creation with
 * overrides above the TENT_* environment, a bad one refused with a message
 * naming its source, the knob and the range. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "tent/tent.h"

static void setup(void) { setenv("TENT_CONTROL_ADDRESS", "127.0.0.1", 1); }

Test(capi_embed, knob_table_rows) {
    int n = tent_knob_count();
    cr_assert_gt(n, 10);
    int mca = 0, found = 0;
    for (int i = 0; i < n; ++i) {
        tent_knob_t k;
        cr_assert_eq(tent_knob_get(i, &k), TENT_OK);
        cr_assert(k.key && k.section && k.type && k.default_value && k.range && k.help);
        cr_assert_gt(strlen(k.key), 0);
        mca += k.mca != 0;
        if (strcmp(k.key, "failover_timeout_ms") == 0) {
            found = 1;
            cr_expect_str_eq(k.section, "failover");
            cr_expect_str_eq(k.type, "integer");
            cr_expect_str_eq(k.default_value, "2000");
            cr_expect_str_eq(k.range, "1..3600000");
            cr_expect(k.mca);
        }
    }
    cr_expect(found);
    cr_expect_gt(mca, 10);
    tent_knob_t k;
    cr_expect_eq(tent_knob_get(-1, &k), TENT_ERR_INVALID);
    cr_expect_eq(tent_knob_get(n, &k), TENT_ERR_INVALID);
    cr_expect_eq(tent_knob_get(0, NULL), TENT_ERR_INVALID);
}

Test(capi_embed, overrides_create_and_refuse, .init = setup) {
    /* Valid overrides: the engine starts. */
    const char *keys[] = {"failover_timeout_ms", "log_level"};
    const char *values[] = {"1500", "error"};
    tent_engine_t *e = NULL;
    char error[512] = "";
    cr_assert_eq(tent_engine_create_with_overrides(NULL, keys, values, 2, "btl_tent_", &e, error, sizeof error),
                 TENT_OK, "%s", error);
    cr_assert_not_null(e);
    cr_expect_eq(tent_engine_destroy(e), TENT_OK);

    /* A bad value beats a good TENT_* variable and is named. */
    setenv("TENT_MAX_FAILOVER_ATTEMPTS", "4", 1);
    const char *bad_keys[] = {"max_failover_attempts"};
    const char *bad_values[] = {"65"};
    e = NULL;
    cr_expect_eq(tent_engine_create_with_overrides(NULL, bad_keys, bad_values, 1, "btl_tent_", &e, error, sizeof error),
                 TENT_ERR_INVALID);
    cr_expect_null(e);
    cr_expect(strstr(error, "mca btl_tent_max_failover_attempts=65") != NULL, "%s", error);
    cr_expect(strstr(error, "0..64") != NULL, "%s", error);
    unsetenv("TENT_MAX_FAILOVER_ATTEMPTS");

    /* An unknown key. */
    const char *unknown[] = {"failover_timeout"};
    const char *v[] = {"10"};
    cr_expect_eq(tent_engine_create_with_overrides(NULL, unknown, v, 1, "btl_tent_", &e, error, sizeof error),
                 TENT_ERR_INVALID);
    cr_expect(strstr(error, "unknown knob failover_timeout") != NULL, "%s", error);
    cr_expect_eq(tent_engine_create_with_overrides(NULL, NULL, NULL, 1, "x", &e, NULL, 0), TENT_ERR_INVALID);
}
