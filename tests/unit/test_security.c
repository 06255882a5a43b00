/* The [security] settings (engine/security.c): the config file's keys are the engine's
 * settings, values are checked, what a create asks is seen, and the strictest setting wins. */
#include "app/config.h"
#include "engine/engine_internal.h"
#include "engine/security.h"
#include "engine/session_config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

/* Every key the config file takes is a setting of the engine's table, and no more or fewer. */
static void test_config_keys_are_the_settings(void **state)
{
    (void)state;
    struct engine eng;
    memset(&eng, 0, sizeof(eng));
    const char *names[CONFIG_SECURITY_KEYS + 1] = {0}, *values[CONFIG_SECURITY_KEYS + 1] = {0};
    for (size_t i = 0; i < CONFIG_SECURITY_KEYS; i++) {
        names[i] = config_security_keys[i];
        values[i] = "allow";
    }
    char *err = NULL;
    assert_int_equal(security_configure(&eng, names, values, &err), 0);
    for (size_t i = 0; i < SECURITY_ASK_COUNT; i++)
        assert_int_equal(eng.security[i], SECURITY_ALLOW);
    assert_int_equal(CONFIG_SECURITY_KEYS, SECURITY_ASK_COUNT);
}

static void test_bad_names_and_values(void **state)
{
    (void)state;
    struct engine eng;
    memset(&eng, 0, sizeof(eng));
    const char *n1[] = {"network_hots", NULL}, *v1[] = {"allow", NULL};
    char *err = NULL;
    assert_int_equal(security_configure(&eng, n1, v1, &err), -1);
    assert_non_null(strstr(err, "network_hots"));
    free(err);
    const char *n2[] = {"gpus", NULL}, *v2[] = {"yes", NULL};
    assert_int_equal(security_configure(&eng, n2, v2, &err), -1);
    assert_non_null(strstr(err, "gpus = \"yes\""));
    free(err);
    /* none named: every setting refuses */
    assert_int_equal(security_configure(&eng, NULL, NULL, &err), 0);
    for (size_t i = 0; i < SECURITY_ASK_COUNT; i++)
        assert_int_equal(eng.security[i], SECURITY_REFUSE);
}

/* What a create asks beyond the hardened default; read-only host dirs and named volumes are
 * not weaker. */
static void test_asks(void **state)
{
    (void)state;
    struct session_config c;
    memset(&c, 0, sizeof(c));
    char what[512];
    assert_int_equal(security_config_asks(&c, what, sizeof(what)), 0u);
    assert_string_equal(what, "");
    c.network = SESSION_NET_HOST;
    c.volumes[0] = (struct session_mount){.source = "/srv/data", .target = "/data"};
    c.volumes[1] = (struct session_mount){.source = "/etc", .target = "/e", .read_only = true};
    c.volumes[2] = (struct session_mount){.source = "vol", .target = "/v", .volume = true};
    c.n_volumes = 3;
    c.ws = SESSION_WS_BIND;
    c.ws_source = "/home/u/proj";
    c.ws_read_only = true;
    unsigned asks = security_config_asks(&c, what, sizeof(what));
    assert_int_equal(asks, (1u << SECURITY_NETWORK_HOST) | (1u << SECURITY_HOST_VOLUMES));
    assert_string_equal(what, "network host; host directory /srv/data read-write at /data");
    c.ws_read_only = false;
    c.setup = json_pack("[s]", "apt-get install -y jq");
    c.runtime = "runsc";
    c.gpus = -1;
    asks = security_config_asks(&c, what, sizeof(what));
    assert_true(asks & (1u << SECURITY_SETUP));
    assert_true(asks & (1u << SECURITY_RUNTIME));
    assert_true(asks & (1u << SECURITY_GPUS));
    assert_non_null(strstr(what, "host directory /home/u/proj read-write at /workspace"));
    assert_non_null(strstr(what, "all GPUs"));
    c.local = true;
    asks = security_config_asks(&c, what, sizeof(what));
    assert_true(asks & (1u << SECURITY_BACKEND_LOCAL));
    assert_non_null(strstr(what, "the local backend"));
    json_decref(c.setup);
    /* OpenHands' user is as isolated as paddock's agent; root is not. */
    memset(&c, 0, sizeof(c));
    c.user = SESSION_USER_OPENHANDS;
    assert_int_equal(security_config_asks(&c, what, sizeof(what)), 0u);
    c.user = SESSION_USER_ROOT;
    assert_int_equal(security_config_asks(&c, what, sizeof(what)), 1u << SECURITY_ROOT_AGENT);
    assert_string_equal(what, "the agent as root");
}

/* The strictest setting among what is asked decides, and a refusal names its setting. */
static void test_decide(void **state)
{
    (void)state;
    struct engine eng;
    memset(&eng, 0, sizeof(eng));
    const char *names[] = {"network_bridge", "ports", NULL}, *values[] = {"allow", "approve", NULL};
    char *err = NULL, msg[700];
    assert_int_equal(security_configure(&eng, names, values, &err), 0);
    assert_int_equal(security_decide(&eng, 1u << SECURITY_NETWORK_BRIDGE, msg, sizeof(msg)),
                     SECURITY_ALLOW);
    assert_int_equal(security_decide(&eng, (1u << SECURITY_NETWORK_BRIDGE) | (1u << SECURITY_PORTS),
                                     msg, sizeof(msg)),
                     SECURITY_APPROVE);
    assert_int_equal(
        security_decide(&eng, (1u << SECURITY_PORTS) | (1u << SECURITY_GPUS), msg, sizeof(msg)),
        SECURITY_REFUSE);
    assert_non_null(strstr(msg, "[security] gpus = \"refuse\""));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config_keys_are_the_settings),
        cmocka_unit_test(test_bad_names_and_values),
        cmocka_unit_test(test_asks),
        cmocka_unit_test(test_decide),
    };
    return cmocka_run_group_tests_name("security", tests, NULL, NULL);
}
