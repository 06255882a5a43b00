/* The config file parser (app/config.c): good files, every error with its line, unknown keys
 * as warnings, OpenHands' names. */
#include "app/config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int parse(const char *text, struct config *c, char **warnings, char **err)
{
    memset(c, 0, sizeof(*c));
    c->keep_runtime_alive = -1;
    c->confirmation_mode = -1;
    return config_parse(text, strlen(text), "config.toml", c, warnings, err);
}

static void test_good_file(void **state)
{
    const char *text = "# paddock\n"
                       "[sandbox]\n"
                       "base_container_image = \"python:3.12-slim\"  # the default image\n"
                       "keep_runtime_alive = false\n"
                       "\n"
                       "[security]\n"
                       "confirmation_mode = true\n"
                       "\n"
                       "[paddock]\r\n"
                       "approval_timeout = 90\n"
                       "retention_days = 7.5\n"
                       "theme = 'light'\n"
                       "mouse = true\n"
                       "socket = \"/run/p \\\"x\\\".sock\"\n";
    struct config c;
    char *w = NULL, *err = NULL;
    assert_int_equal(parse(text, &c, &w, &err), 0);
    assert_null(err);
    assert_null(w);
    assert_string_equal(c.base_container_image, "python:3.12-slim");
    assert_int_equal(c.keep_runtime_alive, 0);
    assert_int_equal(c.confirmation_mode, 1);
    assert_string_equal(config_confirm(&c), "high");
    assert_true(c.approval_timeout == 90.0);
    assert_true(c.retention_days == 7.5);
    assert_string_equal(c.theme, "light");
    assert_int_equal(c.mouse, 1);
    assert_string_equal(c.socket, "/run/p \"x\".sock");
    config_free(&c);
    /* confirm wins over confirmation_mode; false means never */
    assert_int_equal(parse("[security]\nconfirmation_mode = false\n", &c, &w, &err), 0);
    assert_string_equal(config_confirm(&c), "never");
    config_free(&c);
    assert_int_equal(parse("[security]\nconfirmation_mode = false\n[paddock]\nconfirm = "
                           "\"always\"\n",
                           &c, &w, &err),
                     0);
    assert_string_equal(config_confirm(&c), "always");
    config_free(&c);
    assert_int_equal(parse("", &c, &w, &err), 0);
    assert_null(config_confirm(&c));
    config_free(&c);
}

static void test_unknown_keys_warn(void **state)
{
    struct config c;
    char *w = NULL, *err = NULL;
    assert_int_equal(parse("[sandbox]\nuse_host_network = true\nruntime_extra_deps = [\"a\", "
                           "\"b\"]\n[llm]\nmodel = \"x\"\n",
                           &c, &w, &err),
                     0);
    assert_non_null(w);
    assert_non_null(strstr(w, "config.toml:2: unknown key sandbox.use_host_network"));
    assert_non_null(strstr(w, "config.toml:3: unknown key sandbox.runtime_extra_deps"));
    assert_non_null(strstr(w, "config.toml:5: unknown key llm.model"));
    free(w);
    config_free(&c);
}

/* [approvals]: the engine-wide rules as lists, in order, and the ceiling. */
static void test_approvals_rules(void **state)
{
    struct config c;
    char *w = NULL, *err = NULL;
    assert_int_equal(parse("[approvals]\nallow = [\"git status *\", 'make *']\n"
                           "deny = [\"*--force*\"]\nceiling = \"high\"\n"
                           "allow = [\"npm test *\"]  # a second one replaces the first\n",
                           &c, &w, &err),
                     0);
    assert_null(w);
    assert_non_null(c.allow);
    assert_string_equal(c.allow[0], "npm test *");
    assert_null(c.allow[1]);
    assert_string_equal(c.deny[0], "*--force*");
    assert_null(c.deny[1]);
    assert_string_equal(c.rule_ceiling, "high");
    config_free(&c);
    assert_null(c.allow);
    assert_int_equal(parse("[approvals]\nallow = []\n", &c, &w, &err), 0);
    assert_non_null(c.allow);
    assert_null(c.allow[0]);
    config_free(&c);
}

static void test_errors_name_the_line(void **state)
{
    static const struct {
        const char *text, *want;
    } cases[] = {
        {"[paddock]\ntheme \"dark\"\n", "config.toml:2: expected '=' after the key theme"},
        {"[paddock\n", "config.toml:1: a section is [name]"},
        {"\n\n[paddock]\ntheme = \"dark\n", "config.toml:4: the string has no closing \""},
        {"[paddock]\napproval_timeout = \"ten\"\n",
         "config.toml:2: approval_timeout takes a number"},
        {"[paddock]\ntheme = 3\n", "config.toml:2: theme takes a \"string\""},
        {"[security]\nconfirmation_mode = \"yes\"\n",
         "config.toml:2: confirmation_mode takes true"},
        {"[paddock]\napproval_timeout = -1\n", "config.toml:2: approval_timeout must be above 0"},
        {"[paddock]\napproval_timeout = 8640000\n",
         "config.toml:2: approval_timeout must be at most 86400"},
        {"[paddock]\ntheme = \"dark\" extra\n", "config.toml:2: unexpected text"},
        {"[paddock]\n= 3\n", "config.toml:2: expected a key"},
        {"[paddock]\ntheme = \n", "config.toml:2: expected a value"},
        {"[paddock]\ntheme = \"a\\qb\"\n", "config.toml:2: unknown escape"},
        {"[paddock]\ntheme = [\"a\"\n", "config.toml:2: expected ',' or ']'"},
        {"[approvals]\nallow = \"ls *\"\n", "config.toml:2: allow takes [\"strings\"]"},
        {"[approvals]\ndeny = true\n", "config.toml:2: deny takes [\"strings\"]"},
        {"[approvals]\nceiling = [\"high\"]\n", "config.toml:2: ceiling does not take an array"},
        {"[paddock]\ntheme = [\"a\"]\n", "config.toml:2: theme does not take an array"},
        {"[engines.b]\nurl = 3\n", "config.toml:2: url of an engine takes a \"string\""},
        {"[engines.local]\nurl = \"https://h:1\"\n", "config.toml:1: the engine name local"},
        {"[engines.a b]\n", "config.toml:1: an engine's name is letters"},
        {"[engines.b]\nurl = \"https://h:1\"\n[engines.b]\n", "config.toml:3: [engines.b] comes"},
        {"[engines.b]\nca = \"/ca.pem\"\n", "config.toml: [engines.b] has no url"},
        {"[egress.presets.a b]\n", "config.toml:1: a preset's name is letters"},
        {"[egress.presets.x]\n[egress.presets.x]\n", "config.toml:2: [egress.presets.x] comes"},
        {"[egress.presets.x]\nallow = \"h\"\n", "config.toml:2: allow takes [\"strings\"]"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct config c;
        char *w = NULL, *err = NULL;
        assert_int_equal(parse(cases[i].text, &c, &w, &err), -1);
        assert_non_null(err);
        if (!strstr(err, cases[i].want))
            fail_msg("%s: got %s", cases[i].want, err);
        free(err);
        free(w);
        config_free(&c);
    }
}

/* [engines.NAME] sections, in the file's order; unknown keys in one warn. */
static void test_engines(void **state)
{
    const char *text = "[paddock]\ntheme = \"dark\"\n"
                       "[engines.build-1]\nurl = \"https://10.0.0.2:8443\"\n"
                       "token_file = \"/t1\"\nca = \"/ca.pem\"\ncolour = \"red\"\n"
                       "[engines.gpu]\nurl = \"https://10.0.0.3:8443\"\n"
                       "tls_cert = \"/c.pem\"\ntls_key = \"/k.pem\"\n";
    struct config c;
    char *w = NULL, *err = NULL;
    assert_int_equal(parse(text, &c, &w, &err), 0);
    assert_int_equal(c.nengines, 2);
    assert_string_equal(c.engines[0].name, "build-1");
    assert_string_equal(c.engines[0].url, "https://10.0.0.2:8443");
    assert_string_equal(c.engines[0].token_file, "/t1");
    assert_string_equal(c.engines[0].ca, "/ca.pem");
    assert_null(c.engines[0].cert);
    assert_string_equal(c.engines[1].name, "gpu");
    assert_string_equal(c.engines[1].cert, "/c.pem");
    assert_string_equal(c.engines[1].key, "/k.pem");
    assert_null(c.engines[1].token_file);
    assert_string_equal(c.theme, "dark");
    assert_non_null(w);
    assert_non_null(strstr(w, "unknown key engines.build-1.colour"));
    free(w);
    config_free(&c);
    assert_int_equal(c.nengines, 0);
}

/* [egress.presets.NAME] sections, in the file's order, beside [egress]; unknown keys warn. */
static void test_egress_presets(void **state)
{
    const char *text = "[egress]\nallow = [\"a.org\"]\n"
                       "[egress.presets.internal]\nallow = [\"127.0.0.1:8080\", \"*.corp\"]\n"
                       "colour = \"red\"\n"
                       "[egress.presets.python]\nallow = [\"pypi.mirror.corp:443\"]\n"
                       "[egress]\nask = false\n";
    struct config c;
    char *w = NULL, *err = NULL;
    assert_int_equal(parse(text, &c, &w, &err), 0);
    assert_int_equal(c.negress_presets, 2);
    assert_string_equal(c.egress_presets[0].name, "internal");
    assert_string_equal(c.egress_presets[0].allow[0], "127.0.0.1:8080");
    assert_string_equal(c.egress_presets[0].allow[1], "*.corp");
    assert_null(c.egress_presets[0].allow[2]);
    assert_string_equal(c.egress_presets[1].name, "python");
    assert_string_equal(c.egress_presets[1].allow[0], "pypi.mirror.corp:443");
    assert_null(c.egress_presets[1].allow[1]);
    assert_string_equal(c.egress_allow[0], "a.org");
    assert_int_equal(c.egress_ask, 0);
    assert_non_null(w);
    assert_non_null(strstr(w, "unknown key egress.presets.internal.colour"));
    free(w);
    config_free(&c);
    assert_int_equal(c.negress_presets, 0);
}

static void test_load(void **state)
{
    char dir[] = "/tmp/paddock-config-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[128];
    snprintf(path, sizeof(path), "%s/config.toml", dir);
    FILE *f = fopen(path, "w");
    fputs("[paddock]\nstate_dir = \"/tmp/x\"\n", f);
    fclose(f);
    struct config c;
    char *w = NULL, *err = NULL;
    assert_int_equal(config_load(path, &c, &w, &err), 0);
    assert_string_equal(c.state_dir, "/tmp/x");
    assert_string_equal(c.path, path);
    config_free(&c);
    /* a file named but missing is an error; the default place missing is not */
    char missing[160];
    snprintf(missing, sizeof(missing), "%s/nope.toml", dir);
    assert_int_equal(config_load(missing, &c, &w, &err), -1);
    assert_non_null(strstr(err, "nope.toml"));
    free(err);
    setenv("XDG_CONFIG_HOME", dir, 1);
    unsetenv("PADDOCK_CONFIG");
    assert_int_equal(config_load(NULL, &c, &w, &err), 0);
    assert_null(c.path);
    config_free(&c);
    char *def = config_default_path();
    char want[160];
    snprintf(want, sizeof(want), "%s/paddock/config.toml", dir);
    assert_string_equal(def, want);
    free(def);
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good_file),
        cmocka_unit_test(test_unknown_keys_warn),
        cmocka_unit_test(test_approvals_rules),
        cmocka_unit_test(test_errors_name_the_line),
        cmocka_unit_test(test_engines),
        cmocka_unit_test(test_egress_presets),
        cmocka_unit_test(test_load),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
