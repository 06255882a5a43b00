/* The `:` command line (ui/cmdline.c): the table is whole, names, aliases and unique starts
 * find their command, arguments split (a reason keeps its spaces), unknown commands and wrong
 * arguments are clear errors, --read-only refuses what changes the engine; and the sessions
 * filter and session references the commands use (ops.c, view_sessions.c, model.c). Runs on
 * a dashboard state without a terminal: nothing here draws. */
#include "client/client.h"
#include "client/client_async.h"
#include "ui/ui_internal.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void assert_contains(const char *s, const char *part)
{
    if (!strstr(s, part))
        fail_msg("'%s' does not contain '%s'", s, part);
}

static void test_table_is_whole(void **state)
{
    (void)state;
    size_t n = 0;
    for (const struct ui_command *c = ui_commands; c->name; c++, n++) {
        assert_non_null(c->help);
        assert_non_null(c->args);
        assert_non_null(c->fn);
        assert_true(c->min_args >= 0 && c->min_args <= c->max_args);
        for (const struct ui_command *o = ui_commands; o < c; o++) {
            assert_string_not_equal(o->name, c->name);
            if (c->alias) {
                assert_string_not_equal(o->name, c->alias);
                if (o->alias)
                    assert_string_not_equal(o->alias, c->alias);
            }
        }
    }
    /* what the issue asks for */
    const char *want[] = {"quit",   "theme",   "new",    "pause",   "resume", "stop",
                          "delete", "approve", "reject", "history", "help"};
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        const char *why = NULL;
        const struct ui_command *c = cmdline_find(want[i], &why);
        assert_non_null(c);
        assert_string_equal(c->name, want[i]);
    }
    assert_true(n >= 11);
}

static void test_find(void **state)
{
    (void)state;
    const char *why = NULL;
    assert_string_equal(cmdline_find("q", &why)->name, "quit");    /* alias */
    assert_string_equal(cmdline_find("rm", &why)->name, "delete"); /* alias */
    assert_string_equal(cmdline_find("h", &why)->name, "help");    /* alias before prefixes */
    assert_string_equal(cmdline_find("th", &why)->name, "theme");  /* a start only it has */
    assert_string_equal(cmdline_find("appr", &why)->name, "approve");
    assert_null(cmdline_find("re", &why)); /* resume, reject */
    assert_contains(why, "more than one");
    assert_null(cmdline_find("frobnicate", &why));
    assert_string_equal(why, "unknown command");
    assert_null(cmdline_find("", &why));
    assert_null(cmdline_find("Quit", &why)); /* case matters, as in vi */
}

/* A start of a mutating command's name asks first; its full name, its alias and read-only
 * commands do not; nor do the commands that ask by themselves (delete, the form). */
static void test_needs_confirm(void **state)
{
    (void)state;
    const char *why = NULL;
    static const struct {
        const char *typed;
        bool asks;
    } cases[] = {
        {"p", true},    {"pa", true},    {"pause", false}, {"resu", true},     {"resume", false},
        {"st", true},   {"stop", false}, {"appr", true},   {"approve", false}, {"rej", true},
        {"th", false},  {"q", false},    {"rm", false},    {"del", false},     {"n", false},
        {"exp", false}, {"fi", false},   {"hist", false},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const struct ui_command *c = cmdline_find(cases[i].typed, &why);
        assert_non_null(c);
        if (cmdline_needs_confirm(c, cases[i].typed) != cases[i].asks)
            fail_msg(":%s asks: want %d", cases[i].typed, cases[i].asks);
    }
}

static void test_split(void **state)
{
    (void)state;
    char *argv[4];
    char a[] = "  one  two\tthree ";
    assert_int_equal(cmdline_split(a, argv, 3, false), 3);
    assert_string_equal(argv[0], "one");
    assert_string_equal(argv[1], "two");
    assert_string_equal(argv[2], "three");

    char b[] = "one two three";
    assert_int_equal(cmdline_split(b, argv, 2, false), 3); /* more than max */

    char c[] = "42   not on   this box  ";
    assert_int_equal(cmdline_split(c, argv, 2, true), 2);
    assert_string_equal(argv[0], "42");
    assert_string_equal(argv[1], "not on   this box"); /* the rest, inner spaces kept */

    char d[] = "   ";
    assert_int_equal(cmdline_split(d, argv, 2, true), 0);
    char e[] = "x";
    assert_int_equal(cmdline_split(e, argv, 0, false), 1); /* none allowed */
}

/* ---- on a dashboard state ---- */

struct fixture {
    struct client *client;
    struct ui_options opt;
    struct ui ui;
};

static int ui_setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));
    f->client = client_new("/nonexistent/paddock-test.sock"); /* never connected */
    f->ui.engines[0] = (struct ui_engine){.ui = &f->ui, .name = "local", .client = f->client};
    f->ui.nengines = 1;
    f->ui.async = client_async_new(f->client);
    f->ui.opt = &f->opt;
    f->ui.theme = theme_find("dark");
    f->ui.focus = UI_PANE_SESSIONS;
    json_error_t je;
    json_t *r = json_loads(
        "{\"sessions\": ["
        "{\"id\": \"aa11bb22cc33\", \"name\": \"alpha\", \"image\": \"paddock/base:local\", "
        "\"state\": \"ready\", \"created_at\": 30},"
        "{\"id\": \"aa99ff00ee11\", \"name\": \"beta\", \"image\": \"busybox:latest\", "
        "\"state\": \"paused\", \"created_at\": 20},"
        "{\"id\": \"dd44ee55ff66\", \"name\": \"Gamma-ALPHA\", \"image\": \"python:3\", "
        "\"state\": \"stopped\", \"created_at\": 10}]}",
        0, &je);
    const char *err = NULL;
    assert_int_equal(model_set_sessions(&f->ui.model, r, &err), 0);
    json_decref(r);
    view_sessions.sync(&f->ui);
    *state = f;
    return 0;
}

static int ui_teardown(void **state)
{
    struct fixture *f = *state;
    ui_modal_close(&f->ui);
    ui_pages_end(&f->ui);
    model_free(&f->ui.model);
    ops_free(&f->ui);
    free(f->ui.sel_session);
    client_async_free(f->ui.async);
    client_free(f->client);
    free(f);
    return 0;
}

/* With several engines an action id is per engine: ID@ENGINE picks one; a bare ID two
 * engines share is refused; an engine's name that has no such item is not found. */
static void test_decide_engines(void **state)
{
    struct fixture *f = *state;
    struct ui *ui = &f->ui;
    ui->engines[1] = (struct ui_engine){.ui = ui, .name = "build", .client = f->client};
    ui->nengines = 2;
    json_error_t je;
    json_t *a0 = json_loads("{\"approvals\": [{\"id\": 3, \"created_at\": 1}]}", 0, &je);
    json_t *a1 = json_loads("{\"approvals\": [{\"id\": 3, \"created_at\": 2}]}", 0, &je);
    const char *err = NULL;
    assert_int_equal(model_set_approvals_of(&ui->model, 0, a0, &err), 0);
    assert_int_equal(model_set_approvals_of(&ui->model, 1, a1, &err), 0);
    json_decref(a0);
    json_decref(a1);

    cmdline_run(ui, "approve 3");
    assert_true(ui->status_error);
    assert_contains(ui->status, "waits on several engines: say which, as 3@ENGINE");
    cmdline_run(ui, "approve 3@nosuch");
    assert_contains(ui->status, "action 3@nosuch does not wait for approval");
    cmdline_run(ui, "approve 3@build");
    assert_false(ui->status_error);
    assert_string_equal(ui->status, "approving action 3 ...");
    assert_int_equal(ui->decided_engine, 1);
    assert_int_equal(ui->list[UI_LIST_APPROVALS].sel, 1);
}

static void test_run_errors(void **state)
{
    struct fixture *f = *state;
    struct ui *ui = &f->ui;

    cmdline_run(ui, "frobnicate now");
    assert_true(ui->status_error);
    assert_string_equal(ui->status, ":frobnicate: unknown command (:help lists the commands)");

    cmdline_run(ui, "re");
    assert_contains(ui->status, ":re: more than one command starts with that");

    cmdline_run(ui, "quit now");
    assert_true(ui->status_error);
    assert_string_equal(ui->status, "usage: :quit");
    cmdline_run(ui, "approve");
    assert_string_equal(ui->status, "usage: :approve ID");
    cmdline_run(ui, "approve 1 2");
    assert_string_equal(ui->status, "usage: :approve ID");
    cmdline_run(ui, "approve x1");
    assert_contains(ui->status, "'x1' is not an action id");
    cmdline_run(ui, "reject 7 too risky here");
    assert_contains(ui->status, "action 7 does not wait for approval");
    cmdline_run(ui, "pause nosuch");
    assert_string_equal(ui->status, "nosuch: no such session (an id or a name)");
    cmdline_run(ui, "pause aa");
    assert_string_equal(ui->status, "aa: begins 2 sessions: aa11bb22 (alpha) aa99ff00 (beta); "
                                    "type more of the id, or the name");

    /* nothing typed: nothing happens */
    ui->status[0] = '\0';
    assert_int_equal(cmdline_run(ui, "  "), 0);
    assert_int_equal(cmdline_run(ui, ":"), 0);
    assert_string_equal(ui->status, "");
}

static void test_run_commands(void **state)
{
    struct fixture *f = *state;
    struct ui *ui = &f->ui;
    assert_int_equal(cmdline_run(ui, "q") & UI_QUIT, UI_QUIT);
    assert_int_equal(cmdline_run(ui, ":quit") & UI_QUIT, UI_QUIT);

    assert_false(ui->help_visible);
    cmdline_run(ui, "help");
    assert_true(ui->help_visible);

    cmdline_run(ui, "theme");
    assert_false(ui->status_error);
    assert_string_equal(ui->status, "theme dark (have: dark)");
    cmdline_run(ui, "theme nope");
    assert_true(ui->status_error);
    assert_contains(ui->status, "no theme 'nope' (have: dark;");

    /* a session op on the selected one sends its request and says so */
    assert_string_equal(ui->sel_session, "aa11bb22cc33");
    /* (the open tab and the sparklines may have fetches of their own waiting) */
    size_t before = client_async_pending(ui->async);
    cmdline_run(ui, "pause");
    assert_false(ui->status_error);
    assert_string_equal(ui->status, "pausing alpha ...");
    assert_int_equal(client_async_pending(ui->async), before + 1);
    cmdline_run(ui, "stop beta"); /* by name */
    assert_string_equal(ui->status, "stopping beta ...");
    cmdline_run(ui, "resume dd44"); /* by the start of its id */
    assert_string_equal(ui->status, "resuming Gamma-ALPHA ...");
    /* delete asks first: a question, no request */
    size_t pending = client_async_pending(ui->async);
    cmdline_run(ui, "delete beta");
    assert_non_null(ui->modal);
    assert_int_equal(client_async_pending(ui->async), pending);
    ui->modal->on_key(ui, '\n', false); /* Enter says no */
    assert_null(ui->modal);
    assert_int_equal(client_async_pending(ui->async), pending);
    assert_string_equal(ui->status, "cancelled");
    cmdline_run(ui, "rm beta");
    ui->modal->on_key(ui, 'y', false);
    assert_int_equal(client_async_pending(ui->async), pending + 1);
    assert_string_equal(ui->status, "deleting beta ...");
}

static void test_read_only_refuses(void **state)
{
    struct fixture *f = *state;
    struct ui *ui = &f->ui;
    f->opt.read_only = true;
    size_t before = client_async_pending(ui->async); /* the tab's and sparklines' own fetches */
    const char *refused[] = {"pause",    "resume beta", "stop",      "delete",
                             "rm alpha", "new",         "approve 3", "reject 3 no"};
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        ui->status[0] = '\0';
        cmdline_run(ui, refused[i]);
        assert_true(ui->status_error);
        assert_contains(ui->status, "read-only dashboard: :");
        assert_contains(ui->status, "is disabled");
        assert_null(ui->modal);
    }
    assert_int_equal(client_async_pending(ui->async), before);
    /* and the keys: refused by keys_run with the same kind of message */
    unsigned dirty = 0;
    const int keys[] = {'p', 'u', 'S', 'D', 'c'};
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        ui->status[0] = '\0';
        assert_int_equal(keys_run(ui, ops_session_keys, keys[i], false, &dirty), 1);
        assert_contains(ui->status, "read-only dashboard: ");
        assert_null(ui->modal);
    }
    assert_int_equal(client_async_pending(ui->async), before);
    /* what only looks is still there */
    cmdline_run(ui, "filter beta");
    assert_false(ui->status_error);
    assert_int_equal(ui->sessions_nrows, 1);
}

static void test_filter(void **state)
{
    struct fixture *f = *state;
    struct ui *ui = &f->ui;
    const struct model_session *s = &ui->model.sessions[0];
    assert_true(model_session_matches(s, NULL));
    assert_true(model_session_matches(s, ""));
    assert_true(model_session_matches(s, "ALP"));     /* name, any case */
    assert_true(model_session_matches(s, "bb22"));    /* id */
    assert_true(model_session_matches(s, "base:lo")); /* image */
    assert_true(model_session_matches(s, "read"));    /* state */
    assert_false(model_session_matches(s, "busybox"));

    assert_int_equal(view_sessions.count(ui), 3);
    view_sessions_set_filter(ui, "alpha");
    assert_int_equal(view_sessions.count(ui), 2); /* alpha and Gamma-ALPHA */
    assert_int_equal(view_sessions_row_index(ui, 0), 0);
    assert_int_equal(view_sessions_row_index(ui, 1), 2);
    assert_int_equal(view_sessions_row_index(ui, 2), SIZE_MAX);
    char title[128];
    view_sessions.title(ui, title, sizeof(title));
    assert_string_equal(title, "Sessions (2 of 3) /alpha"); /* the title shows it */

    /* the selection follows: a session filtered out is not selected */
    view_sessions_set_filter(ui, "paused");
    assert_int_equal(view_sessions.count(ui), 1);
    assert_string_equal(ui->sel_session, "aa99ff00ee11");
    char cell[64];
    enum ui_color color = UI_C_NORMAL;
    view_sessions.cell(ui, 0, 2, cell, sizeof(cell), &color); /* NAME (after ID, ENGINE) */
    assert_string_equal(cell, "beta");

    /* nothing matches: nothing selected, and the list says why */
    view_sessions_set_filter(ui, "zzz");
    assert_int_equal(view_sessions.count(ui), 0);
    assert_null(ui->sel_session);
    assert_contains(view_sessions.empty(ui), "no session matches");

    /* an event while filtered: the rows follow the model */
    view_sessions_set_filter(ui, "ready");
    json_error_t je;
    json_t *ev = json_loads("{\"id\": \"aa99ff00ee11\", \"name\": \"beta\", \"state\": \"ready\", "
                            "\"created_at\": 20}",
                            0, &je);
    model_upsert_session(&ui->model, ev);
    json_decref(ev);
    view_sessions.sync(ui);
    assert_int_equal(view_sessions.count(ui), 2);

    /* cleared (Esc): all of them */
    view_sessions_set_filter(ui, NULL);
    assert_int_equal(view_sessions.count(ui), 3);
    assert_null(ui->sessions_filter);
    view_sessions.title(ui, title, sizeof(title));
    assert_string_equal(title, "Sessions (3)");
    cmdline_run(ui, "filter   gamma ");
    assert_int_equal(view_sessions.count(ui), 1);
    assert_string_equal(ui->sessions_filter, "gamma");
    cmdline_run(ui, "filter");
    assert_int_equal(view_sessions.count(ui), 3);
}

static void test_find_session(void **state)
{
    struct fixture *f = *state;
    char why[300];
    assert_int_equal(ops_find_session(&f->ui, "aa99ff00ee11", why, sizeof(why)), 1); /* id */
    assert_int_equal(ops_find_session(&f->ui, "Gamma-ALPHA", why, sizeof(why)), 2);  /* name */
    assert_int_equal(ops_find_session(&f->ui, "aa1", why, sizeof(why)), 0); /* unique start */
    assert_int_equal(ops_find_session(&f->ui, "aa", why, sizeof(why)), -1);
    /* an ambiguous start names the candidates, as the CLI and the API do */
    assert_non_null(strstr(why, "begins 2 sessions"));
    assert_non_null(strstr(why, "aa99ff00"));
    assert_int_equal(ops_find_session(&f->ui, "gamma-alpha", why, sizeof(why)), -1);
    assert_int_equal(ops_find_session(&f->ui, "", why, sizeof(why)), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_is_whole),
        cmocka_unit_test(test_find),
        cmocka_unit_test(test_needs_confirm),
        cmocka_unit_test(test_split),
        cmocka_unit_test_setup_teardown(test_run_errors, ui_setup, ui_teardown),
        cmocka_unit_test_setup_teardown(test_decide_engines, ui_setup, ui_teardown),
        cmocka_unit_test_setup_teardown(test_run_commands, ui_setup, ui_teardown),
        cmocka_unit_test_setup_teardown(test_read_only_refuses, ui_setup, ui_teardown),
        cmocka_unit_test_setup_teardown(test_filter, ui_setup, ui_teardown),
        cmocka_unit_test_setup_teardown(test_find_session, ui_setup, ui_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
